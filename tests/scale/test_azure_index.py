"""An az:// index on Azurite, end to end: `rag ingest` writes it (Lance's table through its Azure
client, the lease and CURRENT through raggity.store.azure_objects), `rag search` and `rag status` in
other processes read it and find what a local index finds, a re-ingest of unchanged files commits
nothing, and a refused key or an unreachable endpoint is one line without the key."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lance
import pytest

from raggity.store.object_commit import LEASE, committed_manifest, current_commit
from raggity.store.object_store import StoreObjects
from raggity.store.object_store_errors import lance_store_error
from raggity.store.uri import IndexLocation
from tests.azurite_server import FAKE_CREDENTIALS, AzuriteServer, _azurite_server, azurite
from tests.support import assert_clean_error, rag, write_config, write_corpus

__all__ = ["_azurite_server", "azurite"]

# The development key in this process's environment too (the objects read here, as a reader would).
pytestmark = pytest.mark.usefixtures("azurite")

QUERIES = ["How do I install frobnicator on Linux?", "moons of Jupiter with an ocean"]
KEY = FAKE_CREDENTIALS["AZURE_STORAGE_ACCOUNT_KEY"]


@dataclass(frozen=True)
class Project:
    root: Path
    remote: Path
    local: Path
    location: IndexLocation
    env: dict[str, str]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **FAKE_CREDENTIALS, **extra}


def _run(config: Path, project_root: Path, env: dict[str, str], *args: str) -> Any:
    return rag("--config", str(config), *args, cwd=project_root, env=env)


@pytest.fixture(scope="module")
def project(_azurite_server: AzuriteServer, tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The test corpus ingested by `rag ingest` into an az:// index and into a local one."""
    root = tmp_path_factory.mktemp("azure-team")
    write_corpus(root / "docs")
    # Files written this instant are recorded without their stamps (a write in the same tick could
    # go unseen), so a second ingest records them: a re-ingest "of unchanged files" then needs files
    # as old as a user's are, or it depends on how fast the first ingest started.
    settled = time.time() - 600
    for path in (root / "docs").rglob("*"):
        os.utime(path, (settled, settled))
    location = IndexLocation(_azurite_server.prefix(), _azurite_server.storage_options)
    remote = write_config(root / "remote", index={"path": location.uri, "storage": location.storage_options})
    local = write_config(root / "local", index={"path": str(root / "local-index")})
    env = _env()
    for config in (remote, local):
        done = _run(config, root, env, "ingest", "docs")
        assert done.returncode == 0, done.stderr
    return Project(root, remote, local, location, env)


def _search(project: Project, config: Path, query: str) -> list[str]:
    done = _run(config, project.root, project.env, "search", query, "--json")
    assert done.returncode == 0, done.stderr
    return [hit["id"] for hit in json.loads(done.stdout)]


def test_search_and_status_read_the_azure_index_from_other_processes(project: Project) -> None:
    for query in QUERIES:
        remote, local = _search(project, project.remote, query), _search(project, project.local, query)
        assert remote[0] == local[0], query  # the same best chunk as from the local index
    done = _run(project.remote, project.root, project.env, "status", "--json")
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    objects = StoreObjects(project.location)
    commit = current_commit(objects)
    assert commit is not None
    assert (status["index_dir"], status["version"]) == (project.location.uri, commit.version)
    # The committed table version holds exactly the manifest's chunks.
    found = objects.get(commit.manifest)
    assert found is not None
    options = {**project.location.storage_options, "account_key": KEY}
    table_uri = project.location.child("lancedb", "chunks.lance")
    manifest = committed_manifest(found.body.decode(), table_uri, options, commit.manifest)
    ids = manifest.live_ids()
    table = lance.dataset(
        table_uri,
        version=commit.version,
        storage_options=options,
    )
    assert set(table.to_table(columns=["id"])["id"].to_pylist()) == ids
    assert objects.get(LEASE) is None  # the writer released its lease


def test_reingesting_unchanged_files_commits_nothing(project: Project) -> None:
    objects = StoreObjects(project.location)
    before = current_commit(objects)
    done = _run(project.remote, project.root, project.env, "ingest", "docs")
    assert done.returncode == 0, done.stderr
    assert current_commit(objects) == before


def test_a_second_writer_is_told_the_index_is_being_written(project: Project) -> None:
    objects = StoreObjects(project.location)
    body = {"holder": "a colleague's laptop", "expires": 4e9, "host": "elsewhere", "pid": 1}
    etag = objects.create(LEASE, json.dumps(body).encode())
    try:
        done = _run(project.remote, project.root, project.env, "ingest", "docs")
        assert done.returncode != 0
        assert "another ingest is writing this index (a colleague's laptop)" in assert_clean_error(
            done.stderr
        )
    finally:
        objects.delete(LEASE, etag)


def test_a_refused_key_is_one_line_that_never_shows_the_key(project: Project) -> None:
    wrong = "A" * 20 + KEY[20:]
    done = _run(project.remote, project.root, _env(AZURE_STORAGE_ACCOUNT_KEY=wrong), "search", "frobnicator")
    assert done.returncode != 0
    line = assert_clean_error(done.stderr)
    assert "refused the credentials" in line, line
    assert wrong not in done.stderr
    assert KEY not in done.stderr


def test_an_unreachable_endpoint_is_one_line(tmp_path: Path, azurite: AzuriteServer) -> None:
    storage = {**azurite.storage_options, "endpoint": "http://127.0.0.1:9/devstoreaccount1"}
    config = write_config(tmp_path, index={"path": azurite.prefix(), "storage": storage})
    done = _run(config, tmp_path, _env(), "search", "frobnicator")
    assert done.returncode != 0
    assert "the object store is unreachable" in assert_clean_error(done.stderr)


def test_a_missing_container_is_one_line_from_raggity_and_from_lance(
    tmp_path: Path, azurite: AzuriteServer
) -> None:
    location = IndexLocation("az://no-such-container/index", azurite.storage_options)
    config = write_config(tmp_path, index={"path": location.uri, "storage": azurite.storage_options})
    done = _run(config, tmp_path, _env(), "search", "frobnicator")
    assert done.returncode != 0
    assert "az://no-such-container/index: no such container" in assert_clean_error(done.stderr)
    # Lance's own Azure client (the table) says it in its words; raggity maps them to the same kind.
    with pytest.raises(ValueError, match="ContainerNotFound") as raised:
        lance.dataset(
            location.child("lancedb", "chunks.lance"), storage_options=dict(location.storage_options)
        )
    mapped = lance_store_error(raised.value, location)
    assert mapped is not None
    assert mapped.message == "az://no-such-container/index: no such bucket"
