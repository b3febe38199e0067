"""The manifest's per-file records as a Lance table (store/sources_table.py): a writer writes only the
difference, the manifest names the version that holds its records, a writer that died after writing
rows is rolled back to that version, and a manifest that lists its records itself still reads."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import lance
import pytest

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.core.atomic_file import atomic_write_text
from raggity.core.errors import IndexStateError
from raggity.store.layout import IndexLayout
from raggity.store.manifest import SourceEntry, load_header, load_manifest
from raggity.store.sources_table import SourcesWriter, open_table, read_entries
from tests.reliability.helpers import file_text, rag, write_corpus, write_rag_config
from tests.support import write_config


def _entry(n: int, chunks: int = 3) -> SourceEntry:
    digest = hashlib.sha256(str(n).encode()).hexdigest()
    return SourceEntry(
        digest, 100 + n, 1_700_000_000_000_000_000 + n, tuple(f"{digest[:16]}-{k}" for k in range(chunks))
    )


def _records(count: int) -> dict[str, SourceEntry]:
    return {f"/corpus/file{n:04d}.md": _entry(n) for n in range(count)}


def _written_between(uri: str, old: int, new: int) -> tuple[list[str], int]:
    """The sources of the rows version `new` added over version `old` (rows in fragments `old` did
    not have), and how many of `old`'s rows `new` no longer has."""
    before, after = lance.dataset(uri, version=old), lance.dataset(uri, version=new)
    kept = {f.fragment_id for f in before.get_fragments()}
    added = [f for f in after.get_fragments() if f.fragment_id not in kept]
    sources = [s for f in added for s in f.to_table(columns=["source"])["source"].to_pylist()]
    still = sum(f.count_rows() for f in after.get_fragments() if f.fragment_id in kept)
    return sources, before.count_rows() - still


def test_a_changed_file_of_many_deletes_and_appends_only_its_row(tmp_path: Path) -> None:
    uri = str(tmp_path / "sources.lance")
    writer = SourcesWriter(uri, {})
    records = _records(500)
    first = writer.write(records)
    assert first is not None
    new = dict(records)
    new["/corpus/file0007.md"] = _entry(-7, chunks=5)  # changed
    del new["/corpus/file0100.md"]  # removed
    new["/corpus/added.md"] = _entry(9999)  # added
    second = writer.write(new)
    assert second is not None
    assert second > first

    appended, deleted = _written_between(uri, first, second)
    assert sorted(appended) == ["/corpus/added.md", "/corpus/file0007.md"]
    assert deleted == 2  # the changed file's old row and the removed file's
    # Each version reads as the records it was written for.
    assert read_entries(lance.dataset(uri, version=second)) == new
    assert read_entries(lance.dataset(uri, version=first)) == records
    # Nothing changed: no version.
    assert writer.write(new) == second


def test_a_writer_that_died_after_writing_rows_is_restored_to_the_named_version(tmp_path: Path) -> None:
    uri = str(tmp_path / "sources.lance")
    dead = SourcesWriter(uri, {})
    records = _records(20)
    named = dead.write(records)
    assert named is not None
    unnamed = dict(records, **{"/corpus/never-committed.md": _entry(-1)})
    assert dead.write(unnamed) != named  # rows no manifest will name: the writer dies here

    writer = SourcesWriter(uri, {})
    assert writer.start(named, records)  # restored
    latest = open_table(uri, {})
    assert latest is not None
    assert read_entries(latest) == records
    again = {**records, "/corpus/next.md": _entry(-2)}
    version = writer.write(again)
    assert version is not None
    assert read_entries(lance.dataset(uri, version=version)) == again
    appended, deleted = _written_between(uri, latest.version, version)
    assert (appended, deleted) == (["/corpus/next.md"], 0)


def _ingested(tmp_path: Path, files: int) -> tuple[Raggity, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    settled = time.time() - 600  # a file changed the instant it was read is recorded without stamps
    for n in range(files):
        path = docs / f"note{n:02d}.md"
        path.write_text(file_text(f"note{n}", 1 + n % 3), encoding="utf-8")
        os.utime(path, (settled, settled))
    session = Raggity(load_config(write_config(tmp_path, ingest={"chunk_tokens": 32, "parent_tokens": 64})))
    session.ingest([docs])
    return session, docs


def test_an_ingest_that_changes_one_file_writes_only_its_row(tmp_path: Path) -> None:
    session, docs = _ingested(tmp_path, 30)
    layout = session.layout
    before = load_header(layout.manifest)
    assert not before.inline
    assert before.sources_version is not None
    assert before.files == 30
    records = load_manifest(layout.manifest).sources
    assert len(records) == 30
    assert all(entry.chunk_ids for entry in records.values())

    changed = docs / "note05.md"
    changed.write_text(
        changed.read_text(encoding="utf-8") + "\nA new line about a comet.\n", encoding="utf-8"
    )
    session.ingest([docs])
    after = load_header(layout.manifest)
    assert after.sources_version is not None
    assert after.sources_version > before.sources_version
    appended, deleted = _written_between(str(layout.sources), before.sources_version, after.sources_version)
    assert (appended, deleted) == ([str(changed.resolve())], 1)
    new = load_manifest(layout.manifest).sources
    assert {s for s in new if new[s] != records[s]} == {str(changed.resolve())}

    # A no-op ingest writes no row: the manifest names the same version.
    session.ingest([docs])
    assert load_header(layout.manifest).sources_version == after.sources_version


def test_a_kill_after_writing_rows_leaves_readers_on_the_old_records_and_the_next_ingest_repairs(
    tmp_path: Path,
) -> None:
    config = write_rag_config(tmp_path)
    write_corpus(tmp_path / "docs")
    assert rag(config, "ingest").returncode == 0
    layout = IndexLayout(tmp_path / ".raggity")
    named = load_header(layout.manifest).sources_version
    committed = load_manifest(layout.manifest)
    changed = tmp_path / "docs" / "note03.md"
    changed.write_text(changed.read_text(encoding="utf-8") + "\nComet willow granite.\n", encoding="utf-8")
    (tmp_path / "docs" / "note04.txt").unlink()

    killed = rag(config, "ingest", env={"RAGGITY_KILL_AT": "sources:written:1"})
    assert killed.returncode == -9
    # The rows are written, the manifest does not name them: readers keep the last commit.
    latest = open_table(str(layout.sources), {})
    assert latest is not None
    assert latest.version != named
    assert load_header(layout.manifest).sources_version == named
    assert load_manifest(layout.manifest) == committed
    assert rag(config, "search", "comet willow granite").returncode == 0
    # Cleanup deletes every replaced version but never the one the manifest names.
    assert rag(config, "compact", "--keep", "0").returncode == 0
    assert load_manifest(layout.manifest) == committed

    done = rag(config, "ingest")
    assert done.returncode == 0, done.stderr
    repaired = load_manifest(layout.manifest)
    assert str(tmp_path / "docs" / "note04.txt") not in repaired.sources
    assert repaired.sources[str(changed)].sha256 != committed.sources[str(changed)].sha256
    latest = open_table(str(layout.sources), {})
    assert latest is not None
    assert read_entries(latest) == repaired.sources


def _as_format_2(layout: IndexLayout) -> dict[str, Any]:
    """Rewrites the index's manifest as an index built before the sources table left it: the records
    in manifest.json, no sources table."""
    manifest = load_manifest(layout.manifest)
    atomic_write_text(layout.manifest, manifest.to_json())
    shutil.rmtree(layout.sources)
    data: dict[str, Any] = json.loads(layout.manifest.read_text(encoding="utf-8"))
    return data


def test_a_manifest_of_format_2_still_reads_and_the_next_ingest_writes_the_table(tmp_path: Path) -> None:
    session, docs = _ingested(tmp_path, 6)
    layout = session.layout
    records = load_manifest(layout.manifest).sources
    data = _as_format_2(layout)
    assert "sources" in data
    assert "sources_table" not in data

    assert load_manifest(layout.manifest).sources == records  # read as before
    assert load_header(layout.manifest).inline
    fresh = Raggity(session.config, embedder=session.models.embedder, tokenizer=session.models.tokenizer)
    assert fresh.search("notes").candidates  # a reader of the old index answers

    report = fresh.ingest([docs])
    assert (report.added, report.changed, report.chunks_written) == (0, 0, 0)
    header = load_header(layout.manifest)
    assert not header.inline
    assert header.sources_version is not None
    assert (header.files, header.chunks) == (6, sum(len(e.chunk_ids) for e in records.values()))
    assert read_entries(lance.dataset(str(layout.sources), version=header.sources_version)) == records
    assert load_manifest(layout.manifest).sources == records


def test_a_lost_sources_table_is_one_line_for_readers_and_a_plain_ingest_reads_every_file_again(
    tmp_path: Path,
) -> None:
    config = write_rag_config(tmp_path)
    write_corpus(tmp_path / "docs")
    assert rag(config, "ingest").returncode == 0
    layout = IndexLayout(tmp_path / ".raggity")
    committed = load_manifest(layout.manifest)
    shutil.rmtree(layout.sources)

    for command in (("search", "comet willow granite"), ("status",)):
        refused = rag(config, *command)
        assert refused.returncode == 4, refused.stderr
        assert "Traceback" not in refused.stderr
        [line] = [x for x in refused.stderr.splitlines() if x.startswith("error:")]
        assert "sources table" in line
        assert str(layout.sources) in line

    done = rag(config, "ingest")
    assert done.returncode == 0, done.stderr
    assert f"{len(committed.sources)} added" in done.stdout
    repaired = load_manifest(layout.manifest)
    assert repaired.sources.keys() == committed.sources.keys()
    assert repaired.live_ids() == committed.live_ids()
    assert rag(config, "search", "comet willow granite").returncode == 0


def test_compaction_merges_the_small_fragments_of_many_saves_and_leaves_full_files_alone(
    tmp_path: Path,
) -> None:
    uri = str(tmp_path / "sources.lance")
    writer = SourcesWriter(uri, {})
    records = _records(8192 + 100)  # one full data file of 8,192 rows, and one small one
    writer.write(records)
    full = [f.fragment_id for f in lance.dataset(uri).get_fragments() if f.count_rows() == 8192]
    assert len(full) == 1
    for n in range(17):  # a save per batch: one small fragment each
        records = {**records, f"/corpus/batch{n:02d}.md": _entry(-100 - n)}
        writer.write(records)
    before = writer.version
    assert len(lance.dataset(uri).get_fragments()) == 19

    after = writer.compact()
    assert after is not None
    assert before is not None
    assert after > before
    fragments = lance.dataset(uri).get_fragments()
    assert len(fragments) == 2  # the full file, and the 18 small ones merged into one
    assert full[0] in [f.fragment_id for f in fragments]
    assert read_entries(lance.dataset(uri, version=after)) == records
    assert writer.compact() == after  # nothing left to merge: no new version


@pytest.mark.parametrize(
    "table",
    [
        [],
        {"version": "3", "files": 1, "chunks": 1},
        {"version": True, "files": 1, "chunks": 1},
        {"version": 0, "files": 1, "chunks": 1},
        {"version": 2**64, "files": 1, "chunks": 1},
        {"version": 1.5, "files": 1, "chunks": 1},
        {"version": 3, "files": "1", "chunks": 1},
        {"version": 3, "chunks": 1},
    ],
    ids=repr,
)
def test_a_header_naming_no_lance_version_is_the_damaged_manifest_line(tmp_path: Path, table: object) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"fingerprint": None, "sources_table": table}), encoding="utf-8")
    with pytest.raises(IndexStateError, match="index manifest is damaged"):
        load_manifest(path)


def test_a_header_naming_a_version_the_table_lacks_is_one_line(tmp_path: Path) -> None:
    session, _ = _ingested(tmp_path, 2)
    path = session.layout.manifest
    data = json.loads(path.read_text(encoding="utf-8"))
    data["sources_table"]["version"] = 2**63 - 1
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(IndexStateError, match="names version 9223372036854775807 of its sources table"):
        load_manifest(path)
