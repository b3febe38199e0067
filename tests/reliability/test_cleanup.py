"""Cleanup (`rag compact`, and the cleanup after an ingest) deletes the versions no reader can still
be reading and never the one readers open now: a reader that opened an old version before the
cleanup keeps its results, on both stores behind the index seam (a folder, and an S3 server)."""

from __future__ import annotations

import signal
from dataclasses import replace
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

from raggity.api.compact import compact_index
from raggity.api.session import Models, Raggity
from raggity.config.loader import load_config
from raggity.config.schema import Config, IndexConfig
from raggity.pipeline.ingest.indexer import index_store
from raggity.store.index_seam import Snapshot
from raggity.store.layout import IndexLayout
from raggity.store.manifest import load_header, parse_header
from raggity.store.object_commit import MANIFESTS, current_commit
from raggity.store.object_store import S3Objects
from raggity.store.sources_table import beside, read_entries
from tests.reliability.conftest import Store
from tests.reliability.helpers import QUERY, file_text, rag, write_corpus, write_rag_config
from tests.support import write_config

HOUR = 3600


@pytest.fixture(scope="module")
def models() -> Models:
    shared = Models(Config())
    _ = shared.embedder, shared.tokenizer
    return shared


def session(config: Path, models: Models, index: IndexConfig) -> Raggity:
    return Raggity(
        replace(load_config(config), index=index), embedder=models.embedder, tokenizer=models.tokenizer
    )


def snapshot(s: Raggity) -> Snapshot:
    return index_store(s.config).snapshot()  # type: ignore[attr-defined]


def results(snap: Snapshot, models: Models) -> dict[str, Any]:
    """What a reader gets from its snapshot: every listed chunk's text and vector, the keyword hits
    and the nearest chunks of a query."""
    ids = sorted(snap.manifest.live_ids())
    rows = snap.table.fetch(ids)
    [query] = models.embedder.embed([QUERY])
    return {
        "texts": {cid: rows[cid].chunk.text for cid in ids},
        "vectors": {cid: [round(float(x), 5) for x in rows[cid].vector] for cid in ids},
        "keyword": [cid for cid, _ in snap.keyword.search(QUERY, 10)],
        "nearest": [cid for cid, _ in snap.table.nearest(query, 10)],
    }


def table_uri(s: Raggity) -> str:
    location = s.config.index_location
    return (
        location.child("lancedb", "chunks.lance")
        if location.on_object_store
        else str(IndexLayout(s.config.index_dir).table)
    )


def versions(s: Raggity) -> list[int]:
    options = dict(s.config.index_location.storage_options)
    return sorted(int(v["version"]) for v in lance.dataset(table_uri(s), storage_options=options).versions())


def edit(docs: Path, paths: list[Path], round_number: int) -> None:
    paths[0].unlink(missing_ok=True)
    paths[1].write_text(file_text(f"changed-{round_number}", 3), encoding="utf-8")
    (docs / f"new{round_number}.md").write_text(file_text(f"new-{round_number}", 2), encoding="utf-8")


def test_a_reader_of_an_old_version_keeps_its_results_while_cleanup_runs(
    tmp_path: Path, models: Models, store: Store
) -> None:
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    paths = write_corpus(docs, 6)
    s = session(config, models, replace(store.index(tmp_path / ".raggity"), keep_versions_seconds=HOUR))
    s.ingest([docs])
    held = snapshot(s)  # a reader that opened the first commit and reads nothing yet
    expected_old = results(snapshot(s), models)  # the same commit, read before anything changes

    edit(docs, paths, 1)
    s.ingest([docs])
    expected_new = results(snapshot(s), models)
    assert expected_new["texts"] != expected_old["texts"]  # the edits reached the index
    before = versions(s)

    report = compact_index(s.config)  # within the window: the held version is not touched
    assert results(held, models) == expected_old
    assert report.versions_kept >= 2
    assert set(versions(s)) >= {min(before), max(before)}

    # Once no reader can be reading it (a window of 0 s), every old version goes, never the one
    # readers open now.
    report = compact_index(s.config, keep_seconds=0)
    assert report.versions_removed > 0
    assert report.bytes_removed > 0
    assert len(versions(s)) == 1
    assert results(snapshot(s), models) == expected_new
    if store.server is not None:
        objects = S3Objects(s.config.index_location)
        commit = current_commit(objects)
        assert commit is not None
        assert objects.names(f"{MANIFESTS}/") == [commit.manifest]
        assert versions(s) == [commit.version]


def test_cleanup_after_an_ingest_follows_the_config(tmp_path: Path, models: Models, store: Store) -> None:
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    paths = write_corpus(docs, 4)
    off = session(
        config,
        models,
        replace(store.index(tmp_path / ".raggity"), keep_versions_seconds=0, compact_after_ingest=False),
    )
    off.ingest([docs])
    edit(docs, paths, 1)
    off.ingest([docs])
    kept = versions(off)
    assert len(kept) > 2  # nothing deleted: every append, delete and compaction is still there

    on = session(config, models, replace(off.config.index, compact_after_ingest=True))
    expected = results(snapshot(on), models)
    edit(docs, paths, 2)
    on.ingest([docs])
    after = versions(on)
    assert len(after) == 1
    assert after[0] > max(kept)
    assert results(snapshot(on), models) != expected
    # A no-op ingest changes nothing and deletes nothing.
    on.ingest([docs])
    assert versions(on) == after


def test_the_committed_version_stays_when_a_dead_writer_left_newer_ones(
    tmp_path: Path, models: Models, s3: Any
) -> None:
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    write_corpus(docs, 4)
    index = IndexConfig(path=s3.prefix(), storage=s3.storage_options, keep_versions_seconds=0)
    s = session(config, models, index)
    s.ingest([docs])
    expected = results(snapshot(s), models)
    uri, options = table_uri(s), dict(s.config.index_location.storage_options)
    # A writer that died after an append: a Lance version past CURRENT's, with rows no manifest lists.
    dataset = lance.dataset(uri, storage_options=options)
    orphans = dataset.to_table(limit=2).to_pylist()
    for row in orphans:
        row["id"] = "orphan-" + row["id"]
    lance.write_dataset(
        pa.Table.from_pylist(orphans, schema=dataset.schema), uri, mode="append", storage_options=options
    )
    commit = current_commit(S3Objects(s.config.index_location))
    assert commit is not None
    assert max(versions(s)) > commit.version

    compact_index(s.config, keep_seconds=0)
    assert commit.version in versions(s)
    assert results(snapshot(s), models) == expected
    s.ingest([docs])  # the next writer restores over the dead writer's version and converges
    assert results(snapshot(s), models) == expected


def named_sources(s: Raggity) -> int | None:
    """The sources table version the committed manifest names (store/manifest.py)."""
    location = s.config.index_location
    if not location.on_object_store:
        return load_header(IndexLayout(s.config.index_dir).manifest).sources_version
    objects = S3Objects(location)
    commit = current_commit(objects)
    assert commit is not None
    found = objects.get(commit.manifest)
    assert found is not None
    return parse_header(found.body.decode(), commit.manifest).sources_version


def test_cleanup_keeps_the_sources_versions_that_kept_commits_name(
    tmp_path: Path, models: Models, store: Store
) -> None:
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    paths = write_corpus(docs, 6)
    s = session(config, models, replace(store.index(tmp_path / ".raggity"), keep_versions_seconds=HOUR))
    s.ingest([docs])
    first, first_records = named_sources(s), snapshot(s).manifest.sources
    edit(docs, paths, 1)
    s.ingest([docs])
    second, second_records = named_sources(s), snapshot(s).manifest.sources
    assert first is not None
    assert second is not None
    assert second > first
    assert first_records != second_records
    uri = beside(table_uri(s))
    options = dict(s.config.index_location.storage_options)

    compact_index(s.config)  # within the window: the first commit's records stay readable
    assert read_entries(lance.dataset(uri, version=first, storage_options=options)) == first_records

    compact_index(s.config, keep_seconds=0)  # no reader left of the first: only the named one stays
    kept = [int(v["version"]) for v in lance.dataset(uri, storage_options=options).versions()]
    assert kept == [second]
    assert snapshot(s).manifest.sources == second_records


def test_rag_compact_on_the_command_line(tmp_path: Path, models: Models) -> None:
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    paths = write_corpus(docs, 3)
    s = session(config, models, IndexConfig(path=str(tmp_path / ".raggity")))
    s.ingest([docs])
    edit(docs, paths, 1)
    s.ingest([docs])

    done = rag(config, "compact", "--keep", "0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("removed ")
    assert "1 kept" in done.stdout
    assert len(versions(s)) == 1

    missing = write_rag_config(tmp_path / "elsewhere")
    refused = rag(missing, "compact")
    assert refused.returncode == 4
    assert "no index yet" in refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.parametrize("kill_at", ["remote:published", "compact:manifests"])
def test_an_ingest_killed_in_its_cleanup_leaves_its_commit_and_the_next_cleanup_finishes(
    tmp_path: Path, models: Models, s3: Any, kill_at: str
) -> None:
    config = write_config(
        tmp_path,
        ingest={"paths": ["docs"], "chunk_tokens": 32, "parent_tokens": 64},
        index={"path": s3.prefix(), "storage": s3.storage_options, "keep_versions_seconds": 0},
    )
    docs = tmp_path / "docs"
    paths = write_corpus(docs, 4)
    s = Raggity(load_config(config), embedder=models.embedder, tokenizer=models.tokenizer)
    s.ingest([docs])
    edit(docs, paths, 1)

    killed = rag(config, "ingest", env={"RAGGITY_KILL_AT": kill_at})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    # Killed after its publish: readers get the new commit, whole (the table version holds exactly
    # the rows its manifest lists), whatever of the cleanup ran.
    committed = snapshot(s)
    assert str(docs / "new1.md") in committed.manifest.sources
    assert set(committed.table.all_ids()) == committed.manifest.live_ids()
    expected = results(committed, models)

    compact_index(s.config)
    objects = S3Objects(s.config.index_location)
    commit = current_commit(objects)
    assert commit is not None
    assert versions(s) == [commit.version]
    assert objects.names(f"{MANIFESTS}/") == [commit.manifest]
    assert results(snapshot(s), models) == expected
