"""`rag` against an index on the S3 server, as a team uses it: `rag ingest` writes it, `rag search`,
`rag ask` and `rag status` read it from other processes, with the same results as a local index of
the same folder; one writer at a time; a SIGKILLed ingest leaves the previous commit readable and the
next ingest converges; an unreachable store or refused credentials are one line and an exit code."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lance
import pytest

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.mcp.server import ReadOnlyTools
from raggity.store.manifest import load_manifest
from raggity.store.object_commit import LEASE, current_commit
from raggity.store.object_index import ObjectStoreIndex
from raggity.store.object_store import S3Objects
from raggity.store.uri import IndexLocation
from tests.scale.conftest import FAKE_CREDENTIALS, S3Server
from tests.support import (
    RAG,
    assert_clean_error,
    interruptible,
    rag,
    this_checkout,
    write_config,
    write_corpus,
)

QUERIES = [
    "How do I install frobnicator on Linux?",
    "bake the loaf in a Dutch oven",
    "moons of Jupiter with an ocean",
    "invoice total with tax",
]
SECRETS = (FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"], FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"])


@dataclass(frozen=True)
class Project:
    root: Path
    remote: Path  # raggity.toml with [index] path on the S3 server
    local: Path  # the same settings with a local index
    location: IndexLocation
    env: dict[str, str]


def _remote_config(folder: Path, s3: S3Server, uri: str, **sections: dict[str, Any]) -> Path:
    return write_config(folder, index={"path": uri, "storage": s3.storage_options}, **sections)


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **FAKE_CREDENTIALS, **extra}


def _ingest(config: Path, cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return rag("--config", str(config), "ingest", "docs", *args, cwd=cwd, env=env)


def _search(config: Path, cwd: Path, env: dict[str, str], query: str) -> list[str]:
    done = rag("--config", str(config), "search", query, "--json", cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr
    return [hit["id"] for hit in json.loads(done.stdout)]


def _status(config: Path, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    done = rag("--config", str(config), "status", "--json", cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr
    status: dict[str, Any] = json.loads(done.stdout)
    return status


@pytest.fixture(scope="module")
def project(_s3_server: S3Server, tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The test corpus ingested by `rag ingest` into an s3:// index and into a local one."""
    root = tmp_path_factory.mktemp("team")
    write_corpus(root / "docs")
    location = IndexLocation(_s3_server.prefix(), _s3_server.storage_options)
    remote = _remote_config(root / "remote", _s3_server, location.uri)
    local = write_config(root / "local", index={"path": str(root / "local-index")})
    env = _env()
    for config in (remote, local):
        done = _ingest(config, root, env)
        assert done.returncode == 0, done.stderr
    return Project(root, remote, local, location, env)


def test_search_ask_and_status_read_the_s3_index_from_other_processes(project: Project) -> None:
    for query in QUERIES:
        remote = _search(project.remote, project.root, project.env, query)
        local = _search(project.local, project.root, project.env, query)
        # Dense search is the same; keyword search is Lance's full-text index instead of Tantivy's
        # (docs/scaling.md: near-equal BM25), so the fused lists agree at the top and mostly below.
        assert remote[0] == local[0], query
        assert len(set(remote) & set(local)) >= len(local) - 1, query

    remote_status = _status(project.remote, project.root, project.env)
    local_status = _status(project.local, project.root, project.env)
    assert remote_status["index_dir"] == project.location.uri
    assert remote_status["exists"] is True
    assert remote_status["version"] == current_commit(S3Objects(project.location)).version  # type: ignore[union-attr]
    assert (remote_status["files"], remote_status["chunks"]) == (
        local_status["files"],
        local_status["chunks"],
    )
    assert remote_status["embedder"] == local_status["embedder"]

    done = rag("--config", str(project.remote), "ask", QUERIES[0], cwd=project.root, env=project.env)
    assert done.returncode == 0, done.stderr
    assert "install.md" in done.stdout  # cited from the index on the store


def test_a_second_writer_is_told_the_index_is_being_written(project: Project, s3: S3Server) -> None:
    objects = S3Objects(project.location)
    before = current_commit(objects)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        body = {
            "holder": "colleague pid 7",
            "expires": 2**40,
            "host": socket.gethostname(),
            "pid": holder.pid,
        }
        etag = objects.create(LEASE, json.dumps(body).encode())
        done = _ingest(project.remote, project.root, project.env, "--rebuild")
        assert done.returncode == 5
        assert "another ingest is writing this index (colleague pid 7)" in assert_clean_error(done.stderr)
        assert current_commit(objects) == before  # nothing published
        objects.delete(LEASE, etag)
    finally:
        holder.kill()
        holder.wait()


def _row_ids(location: IndexLocation, version: int | None = None) -> set[str]:
    dataset = lance.dataset(
        location.child("lancedb", "chunks.lance"),
        version=version,
        storage_options=dict(location.storage_options),
    )
    return set(dataset.to_table(columns=["id"])["id"].to_pylist())


def test_sigkill_mid_ingest_keeps_the_last_commit_and_the_next_ingest_converges(
    s3: S3Server, tmp_path: Path
) -> None:
    files = write_corpus(tmp_path / "docs")
    location = IndexLocation(s3.prefix(), s3.storage_options)
    remote = _remote_config(tmp_path / "remote", s3, location.uri)
    local = write_config(tmp_path / "local", index={"path": str(tmp_path / "local-index")})
    env = _env()
    assert _ingest(remote, tmp_path, env).returncode == 0
    objects = S3Objects(location)
    first = current_commit(objects)
    assert first is not None
    before = {query: _search(remote, tmp_path, env, query) for query in QUERIES}

    # A changed file, a removed one and a new one; the ingest dies after its second append.
    files["markdown"].write_text(
        files["markdown"].read_text() + "\nUninstall it with rm -rf /opt/frobnicator.\n"
    )
    files["text"].unlink()
    shutil.copy(
        Path(__file__).resolve().parents[2] / "docs" / "citations.md", tmp_path / "docs" / "citations.md"
    )
    killed = _ingest(remote, tmp_path, _env(RAGGITY_KILL_AT="remote:appended:2", RAGGITY_BATCH_CHUNKS="2"))
    assert killed.returncode == -9, killed.stderr
    assert _row_ids(location) != _row_ids(location, first.version)  # the killed run did write rows

    # Readers: still the first commit, whole.
    assert current_commit(objects) == first
    assert {query: _search(remote, tmp_path, env, query) for query in QUERIES} == before

    # The next ingest (this machine: the dead writer's lease is taken over) converges to what a
    # clean ingest of the folder gives, with no orphan rows in the committed version.
    done = _ingest(remote, tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert "1 added, 1 changed, 1 removed" in done.stdout
    assert _ingest(local, tmp_path, env).returncode == 0
    manifest_ids = _manifest_ids(location)
    local_ids = _manifest_ids_local(tmp_path / "local-index")
    assert manifest_ids == local_ids
    commit = current_commit(objects)
    assert commit is not None
    assert commit.version > first.version
    assert _row_ids(location, commit.version) == set().union(*manifest_ids.values())
    for query in QUERIES:
        assert _search(remote, tmp_path, env, query)[0] == _search(local, tmp_path, env, query)[0]


def _manifest_ids(location: IndexLocation) -> dict[str, set[str]]:
    manifest = ObjectStoreIndex(location).committed()
    return {s: set(e.chunk_ids) for s, e in manifest.sources.items()}


def _manifest_ids_local(index: Path) -> dict[str, set[str]]:
    manifest = load_manifest(index / "manifest.json")
    return {s: set(e.chunk_ids) for s, e in manifest.sources.items()}


def test_the_ray_engine_on_a_local_index_is_one_line(tmp_path: Path) -> None:
    config = write_config(tmp_path, index={"path": str(tmp_path / "index")})
    write_corpus(tmp_path / "docs")
    done = rag("--config", str(config), "ingest", "docs", "--engine", "ray", cwd=tmp_path)
    assert done.returncode == 2
    assert "the Ray engine writes to an index on object storage only" in assert_clean_error(done.stderr)
    assert not (tmp_path / "index").exists()
    wrong = rag("--config", str(config), "ingest", "docs", "--engine", "spark", cwd=tmp_path)
    assert wrong.returncode == 2
    assert "--engine must be local or ray" in assert_clean_error(wrong.stderr)


@pytest.fixture
def enforcing(s3: S3Server) -> Iterator[S3Server]:
    """The server checking credentials from now on (moto's reset-auth switch), then open again."""

    def set_free_actions(count: str) -> None:
        request = urllib.request.Request(
            f"{s3.endpoint}/moto-api/reset-auth",
            data=count.encode(),
            method="POST",
            headers={"Content-Type": "text/plain"},
        )
        with urllib.request.urlopen(request, timeout=10):
            pass

    set_free_actions("0")
    try:
        yield s3
    finally:
        set_free_actions("inf")


def _clean_store_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 8, done.stderr
    line = assert_clean_error(done.stderr)
    for secret in SECRETS:
        assert secret not in done.stderr + done.stdout
    return line


@pytest.mark.parametrize(
    "command", [["search", "dutch oven"], ["ask", "dutch oven"], ["status"], ["ingest", "docs"]]
)
def test_an_unreachable_store_is_one_line_for_every_command(
    s3: S3Server, tmp_path: Path, command: list[str]
) -> None:
    write_corpus(tmp_path / "docs")
    options = {**s3.storage_options, "endpoint": "http://127.0.0.1:9"}
    config = write_config(tmp_path, index={"path": s3.prefix(), "storage": options})
    done = rag("--config", str(config), *command, cwd=tmp_path, env=_env())
    assert "the object store is unreachable" in _clean_store_error(done)


def test_refused_credentials_are_one_line_for_reading_and_writing(
    project: Project, enforcing: S3Server
) -> None:
    for command in (["search", "dutch oven"], ["status"], ["ingest", "docs"]):
        done = rag("--config", str(project.remote), *command, cwd=project.root, env=project.env)
        assert "refused the credentials" in _clean_store_error(done), command


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["show", "docs/install.md"], "rag show"),
        (["graph-build"], "rag graph-build"),
        (["graph", "stats"], "rag graph"),
    ],
)
def test_commands_of_a_local_folder_name_themselves_for_a_remote_index(
    s3: S3Server, tmp_path: Path, command: list[str], name: str
) -> None:
    config = write_config(tmp_path, index={"path": s3.prefix(), "storage": s3.storage_options})
    done = rag("--config", str(config), *command, cwd=tmp_path, env=_env())
    assert done.returncode == 2, done.stderr
    assert f"`{name}` works on a local index folder only so far" in assert_clean_error(done.stderr)


def test_ctrl_c_mid_ingest_releases_the_lease_and_publishes_nothing(s3: S3Server, tmp_path: Path) -> None:
    files = write_corpus(tmp_path / "docs")
    location = IndexLocation(s3.prefix(), s3.storage_options)
    remote = _remote_config(tmp_path / "remote", s3, location.uri)
    env = _env()
    assert _ingest(remote, tmp_path, env).returncode == 0
    objects = S3Objects(location)
    first = current_commit(objects)
    assert first is not None
    shutil.copy(
        Path(__file__).resolve().parents[2] / "docs" / "retrieval.md", files["markdown"].parent / "r.md"
    )

    # One chunk per append: the ingest is still writing when the interrupt comes.
    proc = interruptible(
        [str(RAG), "--config", str(remote), "ingest", "docs"],
        cwd=tmp_path,
        env=this_checkout(_env(RAGGITY_BATCH_CHUNKS="1")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    table = location.child("lancedb", "chunks.lance")
    while proc.poll() is None:
        latest = lance.dataset(table, storage_options=dict(location.storage_options)).version
        if latest > first.version + 1:  # rows of this run were appended
            proc.send_signal(signal.SIGINT)
            break
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "interrupted; the index keeps everything committed so far" in stderr
    assert "Traceback" not in stderr
    assert objects.get(LEASE) is None  # released: the next writer need not wait
    assert current_commit(objects) == first
    done = _ingest(remote, tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert "1 added" in done.stdout


@pytest.mark.parametrize("command", [["search", "dutch oven"], ["status"], ["ingest", "docs"]])
def test_a_gs_index_is_one_line_until_lances_writes_to_gcs_are_tested(
    tmp_path: Path, command: list[str]
) -> None:
    write_corpus(tmp_path / "docs")
    config = write_config(tmp_path, index={"path": "gs://team-bucket/docs"})
    done = rag("--config", str(config), *command, cwd=tmp_path, env=_env())
    assert done.returncode == 8, done.stderr
    assert "gs:// indexes are not enabled yet" in assert_clean_error(done.stderr)


def test_the_mcp_tools_read_the_s3_index(project: Project, s3: S3Server) -> None:
    config = load_config(project.remote)
    tools = ReadOnlyTools(Raggity(config), config)
    found = asyncio.run(tools.search(QUERIES[1], 3))
    assert found["sources"][0]["source"].endswith("sourdough.txt")
    status = asyncio.run(tools.status())
    assert (status["index"], status["exists"]) == (project.location.uri, True)
    assert status["files"] == _status(project.local, project.root, project.env)["files"]
