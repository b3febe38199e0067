"""The index describes the files as they are: a file edited while it is read is not left stale, a
rewrite within one timestamp tick is noticed, and after edits BM25 scores and disk size match a
clean ingest of the same files."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from raggity.api.session import Models, Raggity
from raggity.api.status import index_size
from raggity.config.loader import load_config
from raggity.config.schema import Config, IndexConfig
from raggity.core.types import Document
from raggity.ingest.readers import read_file
from raggity.pipeline.ingest.indexer import chunking_settings
from raggity.pipeline.ingest.sources import file_source, in_roots
from raggity.pipeline.ingest.sync import READ_ATTEMPTS, IndexSync
from raggity.store.bm25_index import Bm25Reader
from raggity.store.layout import IndexLayout
from raggity.store.manifest import load_manifest
from raggity.store.vector_table import VectorTableReader
from tests.reliability.helpers import QUERY, file_text, write_corpus, write_rag_config

OLD = "# Keeper\n\nThe harbor lantern is lit by the old ferryman at dusk.\n"
NEW = "# Keeper\n\nThe lighthouse keeper winds the clockwork lamp at midnight.\n"


@pytest.fixture(scope="module")
def models() -> Models:
    shared = Models(Config())
    _ = shared.embedder, shared.tokenizer
    return shared


def session(config: Path, models: Models, index: Path | None = None) -> Raggity:
    cfg = load_config(config)
    if index is not None:
        cfg = replace(cfg, index=IndexConfig(path=str(index)))
    return Raggity(cfg, embedder=models.embedder, tokenizer=models.tokenizer)


def stored_texts(s: Raggity, source: Path) -> str:
    ids = load_manifest(s.layout.manifest).sources[str(source)].chunk_ids
    return " ".join(row.chunk.text for row in VectorTableReader(s.layout.table).fetch(list(ids)).values())


class EditingReader:
    """A source's read(): reads the file, then rewrites it with the next of `edits` before handing the
    documents over, as an editor saving the file while raggity reads it would."""

    def __init__(self, path: Path, edits: list[str]) -> None:
        self._path = path
        self._edits = list(edits)
        self.calls = 0

    def __call__(self) -> Iterator[Document]:
        self.calls += 1
        documents = list(read_file(self._path))
        if self._edits:
            self._path.write_text(self._edits.pop(0), encoding="utf-8")
        yield from documents


def test_a_file_edited_while_read_is_read_again(tmp_path: Path, models: Models) -> None:
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    write_corpus(docs, 3)
    target = docs / "keeper.md"
    target.write_text(OLD, encoding="utf-8")
    s = session(config, models)
    reader = EditingReader(target, [NEW])
    sources = [file_source(p) for p in sorted(docs.iterdir()) if p != target]
    sources.append(replace(file_source(target), read=reader))

    report = s.indexer.ingest_run().index_sources(sources, in_roots([docs]))
    assert reader.calls == 2
    assert report.skipped == ()
    assert "lighthouse keeper" in stored_texts(s, target)
    assert "ferryman" not in stored_texts(s, target)

    # The next run trusts what was recorded: it must describe the chunked text.
    again = s.ingest([docs])
    assert (again.changed, again.chunks_written) == (0, 0)
    assert "lighthouse keeper" in stored_texts(s, target)


class CountingProgress:
    """Counts the chunks the ingest reports as read and as embedded."""

    def __init__(self) -> None:
        self.read_chunks = 0
        self.embedded_chunks = 0

    def planned(self, files: int, sizes: Mapping[str, int]) -> None:
        pass

    def read(self, kind: str, size: int, chunks: int) -> None:
        self.read_chunks += chunks

    def advanced(self, files: int, chunks: int, tokens: int) -> None:
        self.embedded_chunks += chunks

    def warn(self, source: str, reason: str) -> None:
        pass


def test_a_file_that_never_holds_still_is_left_for_the_next_run(
    tmp_path: Path, models: Models, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One-chunk batches: each attempt's chunk is embedded before the file is given up.
    monkeypatch.setenv("RAGGITY_BATCH_CHUNKS", "1")
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    write_corpus(docs, 2)
    target = docs / "keeper.md"
    target.write_text(OLD, encoding="utf-8")
    s = session(config, models)
    edits = [NEW if i % 2 == 0 else OLD for i in range(READ_ATTEMPTS)]
    sources = [file_source(p) for p in sorted(docs.iterdir()) if p != target]
    sources.append(replace(file_source(target), read=EditingReader(target, edits)))
    progress = CountingProgress()

    report = s.indexer.ingest_run().index_sources(sources, in_roots([docs]), progress=progress)
    [skipped] = report.skipped
    assert skipped.source == str(target)
    assert skipped.reason.startswith("changed while being read")
    assert str(target) not in load_manifest(s.layout.manifest).sources
    # What it sent to the embedder counts as read: reported as read with no chunks, those chunks
    # left the time-left estimate short of its own work for the rest of the run.
    assert progress.embedded_chunks > len(load_manifest(s.layout.manifest).live_ids())
    assert progress.read_chunks == progress.embedded_chunks

    final = target.read_text(encoding="utf-8")
    s.ingest([docs])
    assert final.split("\n")[2] in stored_texts(s, target)


def test_a_rewrite_within_the_same_timestamp_is_noticed(tmp_path: Path, models: Models) -> None:
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    write_corpus(docs, 2)
    target = docs / "keeper.md"
    target.write_text(OLD, encoding="utf-8")
    s = session(config, models)
    s.ingest([docs])
    stamp = target.stat()
    # Same size, same mtime: what a second save within one file-system timestamp tick looks like.
    same_size = OLD.replace("ferryman", "boatsman")
    assert len(same_size) == len(OLD)
    target.write_text(same_size, encoding="utf-8")
    os.utime(target, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))

    report = s.ingest([docs])
    assert report.changed == 1
    assert "boatsman" in stored_texts(s, target)


def _edit_round(docs: Path, round_number: int) -> None:
    """Rewrite two files, append to one, delete one and add one."""
    notes = sorted(docs.glob("note*"))
    for path in notes[:2]:
        path.write_text(file_text(f"{path.stem}-round{round_number}", 3), encoding="utf-8")
    with notes[2].open("a", encoding="utf-8") as handle:
        handle.write(f"\nround {round_number}: copper harbor lantern meadow.\n")
    notes[-1].unlink()
    (docs / f"note-new{round_number:02d}.md").write_text(file_text(f"new{round_number}", 2), encoding="utf-8")


def test_bm25_scores_after_edits_equal_a_clean_ingest(tmp_path: Path, models: Models) -> None:
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    write_corpus(docs, 12)
    s = session(config, models)
    s.ingest()
    for round_number in range(2):
        _edit_round(docs, round_number)
        s.ingest()
    clean = session(config, models, index=tmp_path / "clean-index")
    clean.ingest()

    edited = dict(Bm25Reader(s.layout.tantivy).search(QUERY, 500))
    fresh = dict(Bm25Reader(clean.layout.tantivy).search(QUERY, 500))
    assert len(fresh) > 10
    assert edited.keys() == fresh.keys()
    for chunk_id, score in fresh.items():
        assert edited[chunk_id] == pytest.approx(score, rel=1e-5), chunk_id


def test_disk_size_follows_content_over_many_edits(tmp_path: Path, models: Models) -> None:
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    write_corpus(docs, 12)
    s = session(config, models)

    def ingest() -> None:
        # No concurrent reader in this test, so old versions need no grace period.
        sync = IndexSync(
            s.layout,
            embedder=s.models.embedder,
            tokenizer=s.models.tokenizer,
            chunking=chunking_settings(s.config),
            version_grace=timedelta(0),
        )
        sync.run([file_source(p) for p in sorted(docs.iterdir())], in_roots([docs]))

    ingest()
    for round_number in range(8):
        _edit_round(docs, round_number)
        ingest()
    clean = session(config, models, index=tmp_path / "clean-index")
    clean.ingest()
    edited, fresh = index_size(s.layout), index_size(IndexLayout(tmp_path / "clean-index"))
    assert edited <= 1.5 * fresh, (edited, fresh)
    shutil.rmtree(tmp_path / "clean-index")
