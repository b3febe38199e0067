"""An ingest learns which chunk ids the stores hold without reading them when the manifest proves it
(the chunk table's latest version is the one named as holding exactly the listed chunks, and
Tantivy counts as many documents), and reads them whenever a store could hold anything else: rows
no record lists are still removed, and a file whose listed row is missing is still read again.
Real LanceDB and Tantivy."""

from __future__ import annotations

from pathlib import Path

import lance
import numpy as np
import pytest

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.core.types import Chunk, Location
from raggity.store.bm25_index import Bm25Writer
from raggity.store.layout import IndexLayout
from raggity.store.local_index import LocalIndex
from raggity.store.manifest import load_header, load_manifest
from raggity.store.vector_table import VectorTableWriter
from tests.reliability.helpers import write_corpus, write_rag_config


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Raggity:
    """One session's models for every test (an index of its own each)."""
    return Raggity(load_config(write_rag_config(tmp_path_factory.mktemp("models"))))


def _ingested(tmp_path: Path, shared: Raggity) -> Raggity:
    write_corpus(tmp_path / "docs")
    models = shared.models
    session = Raggity(
        load_config(write_rag_config(tmp_path)), embedder=models.embedder, tokenizer=models.tokenizer
    )
    session.ingest()
    return session


def _orphan(n: int) -> Chunk:
    return Chunk(
        f"orphan{n}", "/elsewhere/killed.md", "a row no record lists", "Killed", Location(1, 1), "p", 0, 4
    )


def _table_ids(layout: IndexLayout) -> set[str]:
    return set(lance.dataset(str(layout.table)).to_table(columns=["id"])["id"].to_pylist())


def test_a_committed_index_gives_its_listed_ids_as_what_the_stores_hold(
    tmp_path: Path, shared: Raggity
) -> None:
    session = _ingested(tmp_path, shared)
    layout = session.layout
    assert load_header(layout.manifest).chunk_version is not None
    listed = load_manifest(layout.manifest).live_ids()
    store = LocalIndex(layout)
    with store.lock(0.0), store.writer(shared.models.embedder.dim, "en_stem") as writer:
        manifest = writer.open(rebuild=False)
        ids = writer.ids()
        writer.commit(manifest, changed=False)  # a no-op ingest's end (closes Tantivy's writer)
    assert ids.everywhere == ids.anywhere == listed == _table_ids(layout)
    assert session.ingest().repaired == 0


def test_a_keyword_document_no_record_lists_is_found_and_removed(tmp_path: Path, shared: Raggity) -> None:
    """Tantivy only (the table is unchanged, its version still the named one): the count tells."""
    session = _ingested(tmp_path, shared)
    bm25 = Bm25Writer(session.layout.tantivy)
    bm25.add([_orphan(0)])
    bm25.commit()
    bm25.close()
    assert session.ingest().repaired == 1
    assert "orphan0" not in Bm25Writer(session.layout.tantivy).ids()


def test_a_listed_row_lost_beside_an_unlisted_one_is_read_again(tmp_path: Path, shared: Raggity) -> None:
    """The table's row count is the listed one again, but it is a new version: the ids are read, the
    file whose row went is read again and the unlisted row goes."""
    session = _ingested(tmp_path, shared)
    layout = session.layout
    manifest = load_manifest(layout.manifest)
    source, entry = next(iter(sorted(manifest.sources.items())))
    lost = entry.chunk_ids[0]
    table = VectorTableWriter(layout.lancedb, shared.models.embedder.dim)
    table.delete([lost])
    table.add([_orphan(1)], np.ones((1, shared.models.embedder.dim), dtype=np.float32) / 20)
    assert len(_table_ids(layout)) == load_header(layout.manifest).chunks

    report = session.ingest()
    assert report.repaired == 2  # the unlisted row, and the file missing a row
    assert lost in _table_ids(layout)
    assert "orphan1" not in _table_ids(layout)
    assert load_manifest(layout.manifest).sources[source].chunk_ids == entry.chunk_ids
