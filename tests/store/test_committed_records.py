"""An ingest reads the committed records once: the store keeps the last commit's records for its
next read of that same commit, hands each reader a copy, and reads a new commit anew."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.store.layout import IndexLayout
from raggity.store.local_index import LocalIndex
from raggity.store.manifest import CommittedRecords, Header, Manifest, SourceEntry
from tests.reliability.helpers import file_text
from tests.support import write_config


def _header(version: int, saved: float) -> Header:
    return Header(Manifest(last_ingest=saved), version, files=1, chunks=1, inline=False)


class _CountingLoad:
    """The load a store passes in (reading the sources table), counted."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, header: Header) -> Manifest:
        self.calls += 1
        entry = SourceEntry("digest", 1, 1, (f"chunk-of-version-{header.sources_version}",))
        return Manifest(sources={"/docs/a.md": entry}, last_ingest=header.manifest.last_ingest)


def test_one_commit_is_loaded_once_and_each_read_gets_its_own_copy() -> None:
    records, load = CommittedRecords(), _CountingLoad()
    first = records.read(_header(3, 100.0), load)
    first.sources.pop("/docs/a.md")  # an ingest edits its manifest
    second = records.read(_header(3, 100.0), load)
    writers = records.read(_header(3, 100.0), load, keep=False)
    assert load.calls == 1
    assert list(second.sources) == list(writers.sources) == ["/docs/a.md"]
    assert second.last_ingest == 100.0
    # The writer's read let them go: the next read loads again.
    records.read(_header(3, 100.0), load)
    assert load.calls == 2


def test_another_commit_is_loaded_anew() -> None:
    records, load = CommittedRecords(), _CountingLoad()
    records.read(_header(3, 100.0), load)
    newer = records.read(_header(4, 101.0), load)
    resaved = records.read(_header(4, 102.0), load)  # the same version, saved again
    assert load.calls == 3
    assert newer.sources["/docs/a.md"].chunk_ids == ("chunk-of-version-4",)
    assert resaved.last_ingest == 102.0


def test_a_document_that_lists_its_records_is_read_as_it_is_every_time() -> None:
    records, load = CommittedRecords(), _CountingLoad()
    inline = Header(Manifest(last_ingest=1.0), None, files=0, chunks=0, inline=True)
    records.read(inline, load)
    records.read(inline, load)
    assert load.calls == 2


def test_a_store_reads_the_records_of_a_commit_made_since_its_last_read(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    settled = time.time() - 600  # a file changed the instant it was read is recorded without stamps
    for n in range(3):
        (docs / f"note{n}.md").write_text(file_text(f"note{n}", 2), encoding="utf-8")
        os.utime(docs / f"note{n}.md", (settled, settled))
    session = Raggity(load_config(write_config(tmp_path, ingest={"chunk_tokens": 32, "parent_tokens": 64})))
    session.ingest([docs])
    store = LocalIndex(IndexLayout(session.layout.root))
    before = store.committed()
    assert store.committed().sources == before.sources

    (docs / "note3.md").write_text(file_text("note3", 2), encoding="utf-8")
    session.ingest([docs])  # another writer commits
    after = store.committed()
    assert set(after.sources) - set(before.sources) == {str((docs / "note3.md").resolve())}


def test_records_kept_from_before_the_lock_do_not_hide_a_sources_table_gone_since(tmp_path: Path) -> None:
    """The writer still finds the table missing, and reads every file again, as without kept records."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.md").write_text(file_text("note", 2), encoding="utf-8")
    session = Raggity(load_config(write_config(tmp_path, ingest={"chunk_tokens": 32, "parent_tokens": 64})))
    session.ingest([docs])
    store = LocalIndex(IndexLayout(session.layout.root))
    assert store.committed().sources  # kept
    shutil.rmtree(session.layout.lancedb)  # between the read before the lock and the writer's
    with store.lock(0.0), store.writer(session.models.embedder.dim, "en_stem") as writer:
        assert writer.open(rebuild=False).sources == {}
    assert session.ingest([docs]).added == 1
