"""Kill `rag ingest` with SIGKILL at each step of its write order, then check that the index
still answers from committed rows only and that the next ingest ends equal to a clean ingest.

The kills come from raggity.core.faults: RAGGITY_KILL_AT=name[:n] makes the process SIGKILL
itself the n-th time it reaches checkpoint(name). A case whose kill point is never reached
fails (the ingest exits 0 instead of -9). RAGGITY_BATCH_CHUNKS forces several small batches.
"""

from __future__ import annotations

import shutil
import signal
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.config.schema import IndexConfig
from raggity.core.errors import IndexStateError
from raggity.pipeline.ingest.indexer import index_store
from raggity.store.index_seam import Snapshot
from tests.azurite_server import AzuriteServer
from tests.reliability.helpers import (
    IndexState,
    check_search_after_kill,
    file_text,
    rag,
    read_state,
    write_corpus,
    write_rag_config,
)
from tests.s3_server import S3Server
from tests.support import write_config

BATCH = "6"

# (scenario, kill point). "first": ingest into no index; "update": incremental ingest after
# modifying 3 files (one emptied), deleting 2, adding 2 and renaming 1; "rebuild": --rebuild.
CASES = [
    ("first", "atomic:before-rename"),  # the very first atomic write, the folder's marker: no index yet
    ("first", "atomic:before-rename:2"),  # the first manifest write
    ("first", "reset:manifest"),
    ("first", "read:1"),
    ("first", "embed:before:1"),
    ("first", "embed:after:2"),
    ("first", "lancedb:added:1"),
    ("first", "tantivy:committed:2"),
    ("first", "manifest:before:1"),
    ("first", "manifest:after:2"),
    ("first", "sources:written:2"),  # records written, the manifest not yet naming them
    ("first", "compact:before"),
    ("update", "delete:manifest"),
    ("update", "read:2"),
    ("update", "embed:before:1"),
    ("update", "lancedb:added:1"),
    ("update", "tantivy:committed:1"),
    ("update", "manifest:before:1"),
    ("update", "manifest:after:1"),
    ("update", "sources:written:1"),
    ("update", "stale:before"),
    ("update", "lancedb:deleted"),
    ("update", "compact:before"),
    ("update", "compact:bm25"),
    ("rebuild", "reset:manifest"),
    ("rebuild", "read:3"),
    ("rebuild", "lancedb:added:2"),
    ("rebuild", "lancedb:deleted"),
]


@dataclass
class World:
    work: Path  # the folder every case runs in: raggity.toml, docs/, .raggity/
    config: Path
    session: Raggity
    snapshots: dict[str, Path]
    reference: dict[str, IndexState]

    @property
    def index(self) -> Path:
        return self.work / ".raggity"

    def restore(self, scenario: str) -> None:
        """Puts the scenario's starting folder back in place (copy2 keeps mtimes, so the
        manifest's size/mtime stamps still match)."""
        shutil.rmtree(self.work, ignore_errors=True)
        shutil.copytree(self.snapshots[scenario], self.work, symlinks=True)

    def session_copy(self) -> Raggity:
        """A new session (no cached snapshot) sharing the loaded models."""
        return Raggity(
            self.session.config,
            embedder=self.session.models.embedder,
            tokenizer=self.session.models.tokenizer,
        )

    def clean_ingest(self) -> IndexState:
        """A fresh index of work/docs, built elsewhere, with the same settings."""
        fresh = self.work.parent / "fresh-index"
        shutil.rmtree(fresh, ignore_errors=True)
        config = replace(self.session.config, index=IndexConfig(path=str(fresh)))
        # Shares the loaded model.
        clean = Raggity(
            config, embedder=self.session.models.embedder, tokenizer=self.session.models.tokenizer
        )
        clean.ingest()
        state = read_state(fresh)
        shutil.rmtree(fresh)
        return state


def _mutate(docs: Path) -> None:
    """Modify 3 files (one to empty), delete 2, add 2, rename 1."""
    for name in ("note01.md", "note04.txt"):
        path = docs / name
        path.write_text(path.read_text(encoding="utf-8") + "\nA new paragraph about comet willow granite.\n")
    (docs / "note05.md").write_text("", encoding="utf-8")
    (docs / "note02.txt").unlink()
    (docs / "note07.md").unlink()
    (docs / "added-a.md").write_text(file_text("added-a", 3), encoding="utf-8")
    (docs / "added-b.txt").write_text(file_text("added-b", 1), encoding="utf-8")
    (docs / "note08.txt").rename(docs / "renamed08.txt")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    base = tmp_path_factory.mktemp("crash")
    work = base / "work"
    config = write_rag_config(work)
    write_corpus(work / "docs")
    session = Raggity(load_config(config))
    snapshots = {name: base / f"snapshot-{name}" for name in ("first", "update", "rebuild")}
    shutil.copytree(work, snapshots["first"])
    session.ingest()
    shutil.copytree(work, snapshots["rebuild"])
    shutil.copytree(work, snapshots["update"])
    _mutate(snapshots["update"] / "docs")
    w = World(work, config, session, snapshots, {})
    w.reference["first"] = w.reference["rebuild"] = w.clean_ingest()
    w.restore("update")
    w.reference["update"] = w.clean_ingest()
    for state in w.reference.values():
        assert state.clean
        assert state.table_ids == state.bm25_ids == state.live_ids
        assert len(state.live_ids) > 20
    return w


def test_cases_cover_every_kill_point() -> None:
    points = {p.rsplit(":", 1)[0] if p.rsplit(":", 1)[-1].isdigit() else p for _, p in CASES}
    assert len(CASES) >= 20
    assert points == {
        "read",
        "embed:before",
        "embed:after",
        "lancedb:added",
        "tantivy:committed",
        "manifest:before",
        "manifest:after",
        "sources:written",
        "delete:manifest",
        "stale:before",
        "lancedb:deleted",
        "compact:before",
        "compact:bm25",
        "reset:manifest",
        "atomic:before-rename",
    }


@pytest.mark.parametrize(("scenario", "kill_at"), CASES, ids=[f"{s}-{p}" for s, p in CASES])
def test_killed_ingest_recovers(world: World, scenario: str, kill_at: str) -> None:
    world.restore(scenario)
    args = ["ingest", "--rebuild"] if scenario == "rebuild" else ["ingest"]
    killed = rag(world.config, *args, env={"RAGGITY_KILL_AT": kill_at, "RAGGITY_BATCH_CHUNKS": BATCH})
    assert killed.returncode == -signal.SIGKILL, (
        f"kill point {kill_at} was not reached (exit {killed.returncode})\n{killed.stderr}"
    )
    check_search_after_kill(world.session_copy())

    world.session.ingest()
    after = read_state(world.index)
    expected = world.reference[scenario]
    assert after.table_rows == len(after.table_ids), "duplicate rows in LanceDB"
    assert after.bm25_docs == len(after.bm25_ids), "duplicate documents in Tantivy"
    assert after.live_ids == expected.live_ids
    assert after.table_ids == expected.table_ids
    assert after.bm25_ids == expected.bm25_ids
    leftovers = [p.name for p in world.index.glob(".*.tmp")]
    assert not leftovers, f"temporary files left behind: {leftovers}"


# The same scenarios into an index on object storage (an S3 server on 127.0.0.1), killed at the steps
# of the one ingest algorithm and of the object-store writer: nothing is visible before CURRENT moves,
# and the next ingest converges to what a clean ingest of the folder commits.
OBJECT_STORE_CASES = [
    ("first", "read:1"),
    ("first", "embed:after:2"),
    ("first", "manifest:after:2"),
    ("first", "remote:publish"),
    ("update", "delete:manifest"),
    ("update", "read:2"),
    ("update", "remote:appended:1"),
    ("update", "stale:before"),
    ("update", "remote:deleted"),
    ("update", "remote:publish"),
    ("rebuild", "read:3"),
    ("rebuild", "remote:appended:2"),
    ("rebuild", "remote:publish"),
]
# On Azure (Azurite) the kill points at the object-store writer's own steps: its lease and CURRENT
# are Azure's ETag conditions, the rest of the algorithm is the same code as on S3.
STORE_CASES = [("s3", *case) for case in OBJECT_STORE_CASES] + [
    ("azure", scenario, kill_at) for scenario, kill_at in OBJECT_STORE_CASES if kill_at.startswith("remote:")
]


def _object_store_session(world: World, s3: S3Server | AzuriteServer) -> tuple[Path, Raggity]:
    """raggity.toml for an index under a fresh prefix of the S3 server, ingesting world.work/docs."""
    config = write_config(
        world.work / "remote",
        ingest={"paths": ["../docs"], "chunk_tokens": 32, "parent_tokens": 64},
        index={"path": s3.prefix(), "storage": s3.storage_options},
    )
    models = world.session.models
    return config, Raggity(load_config(config), embedder=models.embedder, tokenizer=models.tokenizer)


def _committed(session: Raggity) -> Snapshot | None:
    try:
        return index_store(session.config).snapshot()
    except IndexStateError:
        return None  # no commit yet


@pytest.mark.parametrize(
    ("store", "scenario", "kill_at"), STORE_CASES, ids=[f"{t}-{s}-{p}" for t, s, p in STORE_CASES]
)
def test_killed_ingest_into_object_storage_recovers(
    world: World, request: pytest.FixtureRequest, store: str, scenario: str, kill_at: str
) -> None:
    world.restore("first")
    server = request.getfixturevalue({"s3": "s3", "azure": "azurite"}[store])
    config, session = _object_store_session(world, server)
    if scenario != "first":
        session.ingest()
    if scenario == "update":
        _mutate(world.work / "docs")
    before = _committed(session)
    args = ["ingest", "--rebuild"] if scenario == "rebuild" else ["ingest"]
    killed = rag(config, *args, env={"RAGGITY_KILL_AT": kill_at, "RAGGITY_BATCH_CHUNKS": BATCH})
    assert killed.returncode == -signal.SIGKILL, (
        f"kill point {kill_at} was not reached (exit {killed.returncode})\n{killed.stderr}"
    )
    # Readers still see the last commit, exactly: its manifest lists the rows of its table version.
    after_kill = _committed(session)
    assert (after_kill is None) == (before is None)
    if after_kill is not None and before is not None:
        assert after_kill.manifest.live_ids() == before.manifest.live_ids()
        assert set(after_kill.table.all_ids()) == after_kill.manifest.live_ids()

    session.ingest()
    done = _committed(session)
    assert done is not None
    expected = world.reference[scenario]
    assert done.manifest.live_ids() == expected.live_ids
    table_ids = done.table.all_ids()
    assert len(table_ids) == len(set(table_ids)), "duplicate rows in the table"
    assert set(table_ids) == expected.live_ids
    assert done.keyword.all_ids() == expected.live_ids
