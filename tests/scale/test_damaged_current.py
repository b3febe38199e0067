"""A damaged `CURRENT` on an index on the S3 server: every command says so in the same one line and
exit code (never an OverflowError, never exit 0), and `rag ingest --rebuild` repairs it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from raggity.store.manifest import Manifest
from raggity.store.object_commit import (
    CURRENT,
    Commit,
    WriterLease,
    current_commit,
    parse_pointer,
    publish,
)
from raggity.store.object_store import S3Objects
from raggity.store.uri import IndexLocation
from tests.scale.conftest import FAKE_CREDENTIALS, S3Server
from tests.support import assert_clean_error, rag, write_config, write_corpus

DAMAGED = "the index's CURRENT pointer"
STATE_EXIT = 4  # IndexStateError, docs/quickstart.md#exit-codes
KEY = "manifests/000000000003-" + "a" * 32 + ".json"


def _pointer(version: object, manifest: object = KEY) -> bytes:
    return json.dumps({"version": version, "manifest": manifest}).encode()


# What a hand edit, a truncated upload or another tool can leave in CURRENT.
DAMAGED_BODIES = {
    "garbage": b"garbage",
    "list": b"[1,2,3]",
    "empty": b"",
    "not utf-8": b"\xff\xfe{",
    "negative": _pointer(-1),
    "zero": _pointer(0),
    "huge": _pointer(99999999999999999999999),
    "u64 max": _pointer(2**64 - 1),
    "float": _pointer(3.0),
    "string": _pointer("3"),
    "bool": _pointer(True),
    "null": _pointer(None),
    "no manifest": json.dumps({"version": 3}).encode(),
    "manifest outside": _pointer(3, "../other-index/manifests/x.json"),
    "manifest lease": _pointer(3, "ingest.lock"),
    "manifest number": _pointer(3, 7),
}


@pytest.mark.parametrize("body", DAMAGED_BODIES.values(), ids=DAMAGED_BODIES.keys())
def test_a_pointer_publish_could_not_have_written_is_damage(body: bytes) -> None:
    assert parse_pointer(body, "etag") is None


def test_the_pointers_publish_writes_parse() -> None:
    assert parse_pointer(_pointer(3), "e") == Commit(3, KEY, "e")
    assert parse_pointer(_pointer(2**63 - 1), "e") == Commit(2**63 - 1, KEY, "e")


def _env() -> dict[str, str]:
    return {**os.environ, **FAKE_CREDENTIALS}


def _project(s3: S3Server, root: Path) -> tuple[Path, IndexLocation]:
    write_corpus(root / "docs")
    location = IndexLocation(s3.prefix(), s3.storage_options)
    config = write_config(root, index={"path": location.uri, "storage": s3.storage_options})
    done = rag("--config", str(config), "ingest", "docs", cwd=root, env=_env())
    assert done.returncode == 0, done.stderr
    return config, location


@pytest.fixture(scope="module")
def project(_s3_server: S3Server, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, IndexLocation]:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in FAKE_CREDENTIALS.items():
            patch.setenv(name, value)
        return _project(_s3_server, tmp_path_factory.mktemp("damaged"))


COMMANDS = {
    "search": ["search", "dutch oven"],
    "ask": ["ask", "How long does the loaf bake?"],
    "status": ["status"],
    "ingest": ["ingest", "docs"],
}


@pytest.mark.parametrize(
    "body",
    [b"garbage", b"[1,2,3]", _pointer(-1), _pointer(99999999999999999999999), "missing version"],
    ids=["garbage", "list", "negative", "huge", "missing version"],
)
def test_every_command_gives_the_same_line_for_a_damaged_current(
    project: tuple[Path, IndexLocation], s3: S3Server, body: bytes | str
) -> None:
    """Before: `garbage` and `[1,2,3]` were one line, but -1 and 10**23 were `internal error:
    OverflowError` (exit 70) for search, ask and ingest, and status exited 0 for -1 and for a version
    the table does not have."""
    config, location = project
    objects = S3Objects(location)
    good = objects.get(CURRENT)
    assert good is not None
    if body == "missing version":
        commit = parse_pointer(good.body, good.etag)
        assert commit is not None
        body = _pointer(commit.version + 1000, commit.manifest)
    assert isinstance(body, bytes)
    objects.replace(CURRENT, body, good.etag)
    try:
        lines = set()
        for name, args in COMMANDS.items():
            done = rag("--config", str(config), *args, cwd=config.parent, env=_env())
            assert done.returncode == STATE_EXIT, (name, done.stdout, done.stderr)
            line = assert_clean_error(done.stderr)
            assert DAMAGED in line, (name, line)
            assert "rag ingest --rebuild" in done.stderr, (name, done.stderr)
            lines.add(line.split(DAMAGED)[0] + DAMAGED)
        assert len(lines) == 1, lines
        # Nothing was written over it: the damage is the user's to see, and --rebuild's to repair.
        found = objects.get(CURRENT)
        assert found is not None
        assert found.body == body
    finally:
        damaged = objects.get(CURRENT)
        assert damaged is not None
        objects.replace(CURRENT, good.body, damaged.etag)


@pytest.mark.parametrize("body", [b"garbage", b"[1,2,3]", _pointer(-1)], ids=["garbage", "list", "negative"])
def test_rag_ingest_rebuild_repairs_a_damaged_current(s3: S3Server, tmp_path: Path, body: bytes) -> None:
    """Before: `--rebuild` said "CURRENT pointer is damaged; fix: run `rag ingest --rebuild`", exit 4,
    forever; only deleting the object by hand recovered."""
    config, location = _project(s3, tmp_path)
    objects = S3Objects(location)
    good = objects.get(CURRENT)
    assert good is not None
    objects.replace(CURRENT, body, good.etag)
    assert rag("--config", str(config), "search", "dutch oven", cwd=tmp_path, env=_env()).returncode == 4

    done = rag("--config", str(config), "ingest", "--rebuild", "docs", cwd=tmp_path, env=_env())
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    repaired = current_commit(objects)
    assert repaired is not None
    found = rag("--config", str(config), "search", "dutch oven", "--json", cwd=tmp_path, env=_env())
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)[0]["source"].endswith("sourdough.txt")
    status = rag("--config", str(config), "status", "--json", cwd=tmp_path, env=_env())
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["version"] == repaired.version
    assert objects.get("ingest.lock") is None


def test_a_rebuild_recovers_the_newest_complete_manifest_and_the_damaged_etag(s3: S3Server) -> None:
    location = IndexLocation(s3.prefix(), s3.storage_options)
    objects = S3Objects(location)
    with WriterLease(objects) as lease:
        first = publish(objects, lease, version=3, manifest=Manifest().to_json(), previous=None)
        second = publish(objects, lease, version=5, manifest=Manifest().to_json(), previous=first)
    # A writer that died between its manifest and CURRENT can leave a newer, unfinished object.
    objects.create("manifests/000000000009-" + "b" * 32 + ".json", b"{trunc")
    damaged = objects.replace(CURRENT, b"[1,2,3]", second.etag)

    with pytest.raises(Exception, match="CURRENT pointer is damaged"):
        current_commit(objects)
    assert current_commit(objects, repair=True) == Commit(5, second.manifest, damaged)


def test_a_rebuild_over_damage_with_no_manifest_left_still_replaces_it(s3: S3Server) -> None:
    objects = S3Objects(IndexLocation(s3.prefix(), s3.storage_options))
    etag = objects.create(CURRENT, b"garbage")
    recovered = current_commit(objects, repair=True)
    assert recovered is not None
    assert recovered.etag == etag
    with WriterLease(objects) as lease:
        publish(objects, lease, version=1, manifest=Manifest().to_json(), previous=recovered)
    assert current_commit(objects) is not None
