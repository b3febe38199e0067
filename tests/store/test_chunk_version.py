"""The manifest names the chunk table's version that holds exactly its chunks, and a reader opens that
version instead of reading every chunk id (issue #45): rows an interrupted ingest wrote after it are
never returned, by the vector search or by Tantivy (which has no versions), and an index whose
manifest names no such version (written before, or saved in the middle of an ingest) is filtered by
its records as before. Real LanceDB and Tantivy throughout."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import lance
import numpy as np
import pytest

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.core.atomic_file import atomic_write_text
from raggity.core.types import Chunk, Location
from raggity.pipeline.search.hybrid import IndexSnapshot
from raggity.store.bm25_index import Bm25Reader, Bm25Writer
from raggity.store.compact import compact_local
from raggity.store.layout import IndexLayout
from raggity.store.local_index import LocalIndex
from raggity.store.manifest import SourceEntry, load_header, load_manifest
from raggity.store.vector_table import VectorTableReader, VectorTableWriter
from tests.reliability.helpers import QUERY, write_corpus, write_rag_config
from tests.support import found_in_every_mode

ORPHANS = 3


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Raggity:
    """One session's models for every test (an index of its own each)."""
    root = tmp_path_factory.mktemp("models")
    return Raggity(load_config(write_rag_config(root)))


def _ingested(tmp_path: Path, shared: Raggity) -> Raggity:
    config = write_rag_config(tmp_path)
    write_corpus(tmp_path / "docs")
    session = _session(config, shared)
    session.ingest()
    return session


def _session(config: Path, shared: Raggity) -> Raggity:
    models = shared.models
    return Raggity(load_config(config), embedder=models.embedder, tokenizer=models.tokenizer)


def _fresh(session: Raggity) -> Raggity:
    """A new reader of the same index (a new `rag search`), with the same models."""
    models = session.models
    return Raggity(session.config, embedder=models.embedder, tokenizer=models.tokenizer)


def _orphans(session: Raggity) -> list[str]:
    """Rows an ingest killed before its next save leaves: in LanceDB and Tantivy, listed nowhere; each
    is the query's own text and vector, so a reader that saw them would rank them first."""
    layout = session.layout
    chunks = [
        Chunk(f"orphan{n}", "/elsewhere/killed.md", QUERY, "Killed", Location(1, 2), f"p{n}", n, 8)
        for n in range(ORPHANS)
    ]
    vectors = np.stack([session.models.embed([QUERY])[0]] * ORPHANS)
    VectorTableWriter(layout.lancedb, vectors.shape[1]).add(chunks, vectors)
    bm25 = Bm25Writer(layout.tantivy)
    bm25.add(chunks)
    bm25.commit()
    bm25.close()
    # They would come first to a reader of the latest table and of Tantivy.
    assert VectorTableReader(layout.table).nearest(vectors[0], 1)[0][0].startswith("orphan")
    assert Bm25Reader(layout.tantivy).search(QUERY, 1)[0][0].startswith("orphan")
    return [c.id for c in chunks]


def _rewrite_header(layout: IndexLayout, chunk_table: dict[str, int] | None) -> None:
    """The manifest document with `chunk_table` as given (None: absent, as an older raggity wrote it)."""
    document = json.loads(layout.manifest.read_text(encoding="utf-8"))
    document.pop("chunk_table", None)
    if chunk_table is not None:
        document["chunk_table"] = chunk_table
    atomic_write_text(layout.manifest, json.dumps(document))


def _returned(session: Raggity) -> set[str]:
    return found_in_every_mode(session, QUERY)


def test_a_completed_ingest_names_the_version_holding_exactly_its_chunks(
    tmp_path: Path, shared: Raggity
) -> None:
    session = _ingested(tmp_path, shared)
    layout = session.layout
    header = load_header(layout.manifest)
    table = lance.dataset(str(layout.table))
    assert header.chunk_version == table.version
    listed = load_manifest(layout.manifest).live_ids()
    assert set(table.to_table(columns=["id"])["id"].to_pylist()) == listed
    assert header.chunks == len(listed)

    snapshot = IndexSnapshot(layout)
    assert snapshot.filter is None  # no chunk id was read to search
    assert snapshot.live == listed  # the records, read when asked for
    assert _returned(session) <= listed


@pytest.mark.parametrize("header", ["named", "old"])
def test_rows_an_interrupted_ingest_left_are_never_returned(
    tmp_path: Path, shared: Raggity, header: str
) -> None:
    session = _ingested(tmp_path, shared)
    layout = session.layout
    named = load_header(layout.manifest).chunk_version
    assert named is not None
    if header == "old":
        _rewrite_header(layout, None)
    orphans = _orphans(session)
    assert lance.dataset(str(layout.table)).version > named  # the table moved on past the manifest

    returned = _returned(_fresh(session))
    assert not returned & set(orphans)
    assert returned <= load_manifest(layout.manifest).live_ids()
    snapshot = IndexSnapshot(layout)
    # Named: the reader opened that version and read no ids; old: it filtered by the records.
    assert (snapshot.filter is None) == (header == "named")


def test_a_save_with_rows_it_does_not_list_names_no_version(tmp_path: Path, shared: Raggity) -> None:
    session = _ingested(tmp_path, shared)
    layout = session.layout
    store = LocalIndex(layout)
    embedder = shared.models.embedder
    chunk = Chunk("extra0", "/elsewhere/new.md", "a new file's chunk", "New", Location(1, 1), "px", 0, 5)
    with store.lock(0.0), store.writer(embedder.dim, "en_stem") as writer:
        manifest = writer.open(rebuild=False)
        writer.append([chunk], np.stack([shared.models.embed([chunk.text])[0]]))
        writer.save(manifest)  # the batch's file is not finished: its row is not listed yet
        assert load_header(layout.manifest).chunk_version is None
        manifest.sources[chunk.source] = SourceEntry("0" * 64, 1, 1, (chunk.id,))
        writer.save(manifest)
        assert load_header(layout.manifest).chunk_version == lance.dataset(str(layout.table)).version
    snapshot = IndexSnapshot(layout)
    assert snapshot.filter is None
    assert "extra0" in {cid for cid, _ in snapshot.table.nearest(shared.models.embed([chunk.text])[0], 50)}


def test_compact_keeps_the_named_version_and_readers_still_hide_what_follows_it(
    tmp_path: Path, shared: Raggity
) -> None:
    session = _ingested(tmp_path, shared)
    layout = session.layout
    named = load_header(layout.manifest).chunk_version
    orphans = _orphans(session)
    compact_local(layout, timedelta(0))
    versions = [int(v["version"]) for v in lance.dataset(str(layout.table)).versions()]
    assert named in versions
    assert len(versions) == 2  # the named one and the latest; every other went
    snapshot = IndexSnapshot(layout)
    assert snapshot.filter is None
    assert not _returned(_fresh(session)) & set(orphans)


@pytest.mark.parametrize("named", ["missing", "latest"])
def test_a_named_version_that_is_gone_or_holds_other_rows_is_not_trusted(
    tmp_path: Path, shared: Raggity, named: str
) -> None:
    """A manifest naming a version the table lacks, or one whose count is not the listed count (a
    copied or tampered folder), is read as an index that names none: filtered by its records."""
    session = _ingested(tmp_path, shared)
    layout = session.layout
    orphans = _orphans(session)
    latest = lance.dataset(str(layout.table)).version
    _rewrite_header(layout, {"version": 10_000 if named == "missing" else latest})
    snapshot = IndexSnapshot(layout)
    assert snapshot.filter == load_manifest(layout.manifest).live_ids()
    assert not _returned(_fresh(session)) & set(orphans)


def test_compact_of_the_named_latest_version_names_the_merged_one(tmp_path: Path, shared: Raggity) -> None:
    """Appends committed without a compaction leave small fragments; `rag compact` merges them into a
    new version holding the same rows, and the manifest names that one, so readers get the merged
    files."""
    session = _ingested(tmp_path, shared)
    layout = session.layout
    store = LocalIndex(layout)
    texts = ["first added chunk", "second added chunk"]
    chunks = [
        Chunk(f"added{n}", "/elsewhere/added.md", text, "Added", Location(n + 1, n + 1), "pa", n, 3)
        for n, text in enumerate(texts)
    ]
    vectors = np.stack(shared.models.embed(texts))
    with store.lock(0.0), store.writer(shared.models.embedder.dim, "en_stem") as writer:
        manifest = writer.open(rebuild=False)
        for n in range(2):  # two appends: two small fragments
            writer.append(chunks[n : n + 1], vectors[n : n + 1])
        manifest.sources["/elsewhere/added.md"] = SourceEntry("0" * 64, 1, 1, tuple(c.id for c in chunks))
        writer.commit(manifest, changed=False)  # the header, no compaction (Tantivy's writer closed)
    saved = load_header(layout.manifest).chunk_version
    assert saved == lance.dataset(str(layout.table)).version
    fragments = len(lance.dataset(str(layout.table)).get_fragments())

    compact_local(layout, timedelta(0))
    merged = lance.dataset(str(layout.table))
    assert len(merged.get_fragments()) < fragments
    header = load_header(layout.manifest)
    assert header.chunk_version == merged.version != saved
    assert header.sources_version == load_header(layout.manifest).sources_version
    snapshot = IndexSnapshot(layout)
    assert snapshot.filter is None
    assert snapshot.table.nearest(vectors[1], 1)[0][0] == "added1"
    assert _returned(_fresh(session)) <= load_manifest(layout.manifest).live_ids()
