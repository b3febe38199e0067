"""An index on the S3 server: LanceDB writes it, another process reads it, one writer at a time holds
it, and readers see only published (complete) versions, also after a writer is killed."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import lance
import lancedb
import pyarrow as pa
import pytest

from raggity.core.errors import IndexBusyError, IndexLocationError
from raggity.store.object_commit import (
    LEASE,
    WriterLease,
    current_commit,
    publish,
    read_manifest_text,
)
from raggity.store.object_store import S3Objects
from raggity.store.uri import IndexLocation
from tests.scale.conftest import FAKE_CREDENTIALS, S3Server

WORKTREE = Path(__file__).resolve().parents[2]


def _rows(ids: list[str]) -> pa.Table:
    return pa.table(
        {
            "id": ids,
            "text": [f"text of {i}" for i in ids],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array([0.5] * (4 * len(ids)), pa.float32()), 4),
        }
    )


def _location(s3: S3Server) -> IndexLocation:
    return IndexLocation(s3.prefix(), s3.storage_options)


def _child(code: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, "PYTHONPATH": str(WORKTREE), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_lancedb_table_on_s3_is_read_by_a_second_process(s3: S3Server) -> None:

    location = _location(s3)
    db = lancedb.connect(location.child("lancedb"), storage_options=dict(location.storage_options))
    table = db.create_table("chunks", data=_rows(["a", "b"]))
    table.add(_rows(["c"]))
    out, err = _run(
        [
            sys.executable,
            "-c",
            _READ_BOTH,
            location.child("lancedb"),
            json.dumps(dict(location.storage_options)),
        ]
    )
    assert json.loads(out) == {"lancedb": ["a", "b", "c"], "lance": ["a", "b", "c"]}, err


_READ_BOTH = textwrap.dedent(
    """
    import json, sys, lance, lancedb
    uri, options = sys.argv[1], json.loads(sys.argv[2])
    db = lancedb.connect(uri, storage_options=options)
    ids = db.open_table("chunks").to_arrow()["id"].to_pylist()
    ds = lance.dataset(uri + "/chunks.lance", storage_options=options)
    print(json.dumps({"lancedb": sorted(ids), "lance": sorted(ds.to_table(columns=["id"])["id"].to_pylist())}))
    """
)


def _run(argv: list[str]) -> tuple[str, str]:
    done = subprocess.run(
        argv,
        env={**os.environ, "PYTHONPATH": str(WORKTREE)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stdout, done.stderr


def test_a_second_writer_gets_a_being_written_error_until_the_first_releases(s3: S3Server) -> None:
    objects = S3Objects(_location(s3))
    with (
        WriterLease(objects, holder="first"),
        pytest.raises(IndexBusyError, match=r"another ingest is writing this index \(first\)"),
    ):
        WriterLease(objects, holder="second").__enter__()
    with WriterLease(objects, holder="second"):
        assert json.loads(objects.get(LEASE).body)["holder"] == "second"  # type: ignore[union-attr]
    assert objects.get(LEASE) is None


def test_a_lease_renewed_by_a_write_whose_reply_was_lost_is_still_released(s3: S3Server) -> None:
    objects = S3Objects(_location(s3))
    lease = WriterLease(objects, holder="first")
    with lease:
        # The renewal's PUT reached the store, its reply did not (Ctrl-C in between): the writer
        # still holds the etag from before.
        found = objects.get(LEASE)
        assert found is not None
        renewed = {**json.loads(found.body), "expires": json.loads(found.body)["expires"] + 60}
        objects.replace(LEASE, json.dumps(renewed).encode(), found.etag)
    assert objects.get(LEASE) is None  # the next writer need not wait for the expiry


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_dead_writers_lease_is_taken_over_once_expired_and_the_old_writer_cannot_publish(
    s3: S3Server,
) -> None:
    objects = S3Objects(_location(s3))
    clock = Clock()
    stale = WriterLease(objects, seconds=60, now=clock, holder="stale")
    stale.__enter__()
    clock.now += 30
    with pytest.raises(IndexBusyError):
        WriterLease(objects, seconds=60, now=clock, holder="new").__enter__()
    clock.now += 31  # past the stale writer's expiry: it is presumed dead
    with WriterLease(objects, seconds=60, now=clock, holder="new") as fresh:
        with pytest.raises(IndexBusyError, match="took the index over"):
            publish(objects, stale, version=7, manifest="{}", previous=None)
        assert current_commit(objects) is None  # the stale writer published nothing
        commit = publish(objects, fresh, version=3, manifest='{"sources": {}}', previous=None)
        stale.__exit__(None, None, None)  # its release must not free the new writer's lease
        assert json.loads(objects.get(LEASE).body)["holder"] == "new"  # type: ignore[union-attr]
    assert current_commit(objects) == commit


def test_publish_refuses_when_current_moved_since_the_ingest_started(s3: S3Server) -> None:
    objects = S3Objects(_location(s3))
    with WriterLease(objects) as lease:
        first = publish(objects, lease, version=1, manifest="one", previous=None)
        publish(objects, lease, version=2, manifest="two", previous=first)
        with pytest.raises(IndexBusyError, match="another writer committed"):
            publish(objects, lease, version=3, manifest="three", previous=first)
    now = current_commit(objects)
    assert now is not None
    assert (now.version, read_manifest_text(objects, now)) == (2, "two")


def _open_committed(location: IndexLocation) -> tuple[Any, str]:
    """What a reader does: CURRENT once, then the table at that version and that manifest."""

    objects = S3Objects(location)
    commit = current_commit(objects)
    assert commit is not None
    dataset = lance.dataset(
        location.child("lancedb", "chunks.lance"),
        version=commit.version,
        storage_options=dict(location.storage_options),
    )
    return dataset, read_manifest_text(objects, commit)


def _ids(dataset: Any) -> list[str]:
    return sorted(dataset.to_table(columns=["id"])["id"].to_pylist())


def test_readers_see_only_published_versions_and_keep_the_one_they_opened(s3: S3Server) -> None:

    location = _location(s3)
    objects = S3Objects(location)
    db = lancedb.connect(location.child("lancedb"), storage_options=dict(location.storage_options))
    with WriterLease(objects) as lease:
        table = db.create_table("chunks", data=_rows(["a", "b"]))
        first = publish(objects, lease, version=table.version, manifest='["a","b"]', previous=None)
        old_reader, old_manifest = _open_committed(location)
        table.add(_rows(["c"]))  # an ingest in progress: a new Lance version, not published
        table.delete("id = 'a'")
        during, during_manifest = _open_committed(location)
        assert (_ids(during), during_manifest) == (["a", "b"], '["a","b"]')
        publish(objects, lease, version=table.version, manifest='["b","c"]', previous=first)
    fresh, fresh_manifest = _open_committed(location)
    assert (_ids(fresh), fresh_manifest) == (["b", "c"], '["b","c"]')
    # A reader opened before the commit keeps reading its version (Lance versions are immutable).
    assert (_ids(old_reader), old_manifest) == (["a", "b"], '["a","b"]')


_KILLED_WRITER = """
import json, sys, time, lancedb, pyarrow as pa
from raggity.store.object_store import S3Objects
from raggity.store.object_commit import WriterLease
from raggity.store.uri import IndexLocation
location = IndexLocation(sys.argv[1], json.loads(sys.argv[2]))
db = lancedb.connect(location.child("lancedb"), storage_options=json.loads(sys.argv[2]))
table = db.open_table("chunks")
lease = WriterLease(S3Objects(location), seconds=3600, holder="doomed")
lease.__enter__()
for n in range(1000):
    ids = [f"orphan-{n}-{k}" for k in range(3)]
    table.add(pa.table({"id": ids, "text": ids,
        "vector": pa.FixedSizeListArray.from_arrays(pa.array([0.1] * 12, pa.float32()), 4)}))
    print(n, flush=True)
    time.sleep(0.05)
"""


def test_sigkill_mid_ingest_leaves_the_last_commit_readable_and_the_next_writer_converges(
    s3: S3Server,
) -> None:

    location = _location(s3)
    objects = S3Objects(location)
    options = dict(location.storage_options)
    db = lancedb.connect(location.child("lancedb"), storage_options=options)
    with WriterLease(objects) as lease:
        table = db.create_table("chunks", data=_rows(["a", "b"]))
        first = publish(objects, lease, version=table.version, manifest='["a","b"]', previous=None)

    writer = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, location.uri, json.dumps(options)],
        env={**os.environ, "PYTHONPATH": str(WORKTREE)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    for _ in range(3):  # three appends committed as Lance versions, then a kill mid-ingest
        assert writer.stdout.readline(), writer.stderr.read() if writer.stderr else ""
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    latest = lance.dataset(location.child("lancedb", "chunks.lance"), storage_options=options)
    assert any(i.startswith("orphan-") for i in _ids(latest))  # the killed run did write rows

    reader, manifest = _open_committed(location)
    assert (_ids(reader), manifest) == (["a", "b"], '["a","b"]')
    assert json.loads(objects.get(LEASE).body)["holder"] == "doomed"  # type: ignore[union-attr]

    # The next writer on this machine takes the dead process's lease over at once (its expiry is an
    # hour away), goes back to the committed version, then on.
    with WriterLease(objects, holder="next") as lease:
        commit = current_commit(objects)
        assert commit == first
        table = db.open_table("chunks")
        table.restore(commit.version)  # a new version with the committed content: the orphans are gone
        table.add(_rows(["c"]))
        publish(objects, lease, version=table.version, manifest='["a","b","c"]', previous=commit)
    reader, manifest = _open_committed(location)
    assert (_ids(reader), manifest) == (["a", "b", "c"], '["a","b","c"]')


def test_a_lease_of_a_live_process_on_this_machine_is_not_taken_over(s3: S3Server) -> None:
    objects = S3Objects(_location(s3))
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        body = {"holder": "busy", "expires": 2**40, "host": socket.gethostname(), "pid": alive.pid}
        objects.create(LEASE, json.dumps(body).encode())
        with pytest.raises(IndexBusyError, match="busy"):
            WriterLease(objects).__enter__()
        alive.kill()
        alive.wait()
        with WriterLease(objects, holder="after"):  # the same lease, once its process is gone
            assert json.loads(objects.get(LEASE).body)["holder"] == "after"  # type: ignore[union-attr]
    finally:
        alive.kill()
        alive.wait()


def test_an_unreachable_store_is_one_error_line_without_secrets(s3: S3Server) -> None:
    location = IndexLocation(
        f"s3://{s3.bucket}/x", {"endpoint": "http://127.0.0.1:9", "region": "us-east-1", "allow_http": "true"}
    )
    with pytest.raises(IndexLocationError) as caught:
        S3Objects(location).get("CURRENT")
    message = str(caught.value)
    assert "unreachable" in message
    assert "\n" not in message
    for secret in (FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"], FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"]):
        assert secret not in message
