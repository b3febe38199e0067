"""The index describes the files as they are: a file edited while it is read is not left stale, a
rewrite within one timestamp tick is noticed, and after edits BM25 scores and disk size match a
clean ingest of the same files. Each rule is checked on both stores behind the index seam (an index
folder and an index on an S3 server: the `store` fixture), since one ingest algorithm serves both."""

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
from raggity.documents.readers import read_file
from raggity.pipeline.ingest.in_process import InProcessRows
from raggity.pipeline.ingest.indexer import chunking_settings, index_store
from raggity.pipeline.ingest.reading import CHANGED_WHILE_READ, READ_ATTEMPTS
from raggity.pipeline.ingest.sources import file_source, in_roots
from raggity.pipeline.ingest.sync import IndexSync
from raggity.store.index_seam import Snapshot
from raggity.store.layout import IndexLayout
from raggity.store.local_index import LocalIndex
from tests.reliability.conftest import Store
from tests.reliability.helpers import QUERY, file_text, write_corpus, write_rag_config

OLD = "# Keeper\n\nThe harbor lantern is lit by the old ferryman at dusk.\n"
NEW = "# Keeper\n\nThe lighthouse keeper winds the clockwork lamp at midnight.\n"


@pytest.fixture(scope="module")
def models() -> Models:
    shared = Models(Config())
    _ = shared.embedder, shared.tokenizer
    return shared


def session(config: Path, models: Models, index: Path | IndexConfig | None = None) -> Raggity:
    cfg = load_config(config)
    if index is not None:
        cfg = replace(cfg, index=index if isinstance(index, IndexConfig) else IndexConfig(path=str(index)))
    return Raggity(cfg, embedder=models.embedder, tokenizer=models.tokenizer)


def snapshot(s: Raggity) -> Snapshot:
    """The index's last commit, read through the seam: a folder's or an object store's."""
    return index_store(s.config).snapshot()


def stored_texts(s: Raggity, source: Path) -> str:
    committed = snapshot(s)
    ids = committed.manifest.sources[str(source)].chunk_ids
    return " ".join(row.chunk.text for row in committed.table.fetch(list(ids)).values())


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


def test_a_file_edited_while_read_is_read_again(tmp_path: Path, models: Models, store: Store) -> None:
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    write_corpus(docs, 3)
    target = docs / "keeper.md"
    target.write_text(OLD, encoding="utf-8")
    s = session(config, models, store.index(tmp_path / ".raggity"))
    reader = EditingReader(target, [NEW])
    sources = [file_source(p) for p in sorted(docs.iterdir()) if p != target]
    sources.append(replace(file_source(target), read=reader))

    report = s.indexer.index_sources(sources, in_roots([docs]))
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
    tmp_path: Path, models: Models, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One-chunk batches: each attempt's chunk is embedded before the file is given up.
    monkeypatch.setenv("RAGGITY_BATCH_CHUNKS", "1")
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    write_corpus(docs, 2)
    target = docs / "keeper.md"
    target.write_text(OLD, encoding="utf-8")
    s = session(config, models, store.index(tmp_path / ".raggity"))
    edits = [NEW if i % 2 == 0 else OLD for i in range(READ_ATTEMPTS)]
    sources = [file_source(p) for p in sorted(docs.iterdir()) if p != target]
    sources.append(replace(file_source(target), read=EditingReader(target, edits)))
    progress = CountingProgress()

    report = s.indexer.index_sources(sources, in_roots([docs]), progress=progress)
    [skipped] = report.skipped
    assert skipped.source == str(target)
    # Worded once (pipeline/ingest/reading.py) for every store and engine: a change of it reaches both
    # stores, as this test's two runs check.
    assert skipped.reason == CHANGED_WHILE_READ
    assert str(target) not in snapshot(s).manifest.sources
    # What it sent to the embedder counts as read: reported as read with no chunks, those chunks
    # left the time-left estimate short of its own work for the rest of the run.
    assert progress.embedded_chunks > len(snapshot(s).manifest.live_ids())
    assert progress.read_chunks == progress.embedded_chunks

    final = target.read_text(encoding="utf-8")
    s.ingest([docs])
    assert final.split("\n")[2] in stored_texts(s, target)


def test_a_rewrite_within_the_same_timestamp_is_noticed(tmp_path: Path, models: Models, store: Store) -> None:
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    write_corpus(docs, 2)
    target = docs / "keeper.md"
    target.write_text(OLD, encoding="utf-8")
    s = session(config, models, store.index(tmp_path / ".raggity"))
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


def test_a_rebuild_of_one_folder_carries_the_other_folders_files_over(
    tmp_path: Path, models: Models, store: Store
) -> None:
    """A rebuild empties the whole index: files indexed from another folder are read again (before the
    seam, a rebuild of an index on object storage dropped them, with a warning)."""
    config = write_rag_config(tmp_path)
    docs, more = tmp_path / "docs", tmp_path / "more"
    write_corpus(docs, 3)
    write_corpus(more, 2)
    s = session(config, models, store.index(tmp_path / ".raggity"))
    s.ingest([docs])
    s.ingest([more])
    indexed = snapshot(s).manifest

    report = s.ingest([docs], rebuild=True)
    assert report.rebuilt
    assert (report.added, report.skipped) == (5, ())
    rebuilt = snapshot(s)
    assert rebuilt.manifest.sources.keys() == indexed.sources.keys()
    assert rebuilt.manifest.live_ids() == indexed.live_ids()
    assert set(rebuilt.table.all_ids()) == rebuilt.manifest.live_ids()


def _edit_round(docs: Path, round_number: int) -> None:
    """Rewrite two files, append to one, delete one and add one."""
    notes = sorted(docs.glob("note*"))
    for path in notes[:2]:
        path.write_text(file_text(f"{path.stem}-round{round_number}", 3), encoding="utf-8")
    with notes[2].open("a", encoding="utf-8") as handle:
        handle.write(f"\nround {round_number}: copper harbor lantern meadow.\n")
    notes[-1].unlink()
    (docs / f"note-new{round_number:02d}.md").write_text(file_text(f"new{round_number}", 2), encoding="utf-8")


def test_bm25_scores_after_edits_equal_a_clean_ingest(tmp_path: Path, models: Models, store: Store) -> None:
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    write_corpus(docs, 12)
    s = session(config, models, store.index(tmp_path / ".raggity"))
    s.ingest()
    for round_number in range(2):
        _edit_round(docs, round_number)
        s.ingest()
    clean = session(config, models, store.index(tmp_path / "clean-index"))
    clean.ingest()

    edited = dict(snapshot(s).keyword.search(QUERY, 500))
    fresh = dict(snapshot(clean).keyword.search(QUERY, 500))
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
        chunking = chunking_settings(s.config)
        sync = IndexSync(
            LocalIndex(s.layout, version_grace=timedelta(0)),
            embedder=s.models.embedder,
            chunking=chunking,
            rows=InProcessRows(s.models.embedder, s.models.tokenizer, chunking),
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
