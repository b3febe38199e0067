"""Incremental ingest end to end: what each kind of file change does to LanceDB, Tantivy and the manifest."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.store.manifest import load_manifest
from raggity.testing import RecordingEmbedder
from tests.support import store_ids, write_config, write_corpus


def session(config: Path) -> Raggity:
    return Raggity(load_config(config))


def source_ids(s: Raggity) -> dict[str, set[str]]:
    return {src: set(e.chunk_ids) for src, e in load_manifest(s.layout.manifest).sources.items()}


def setup(tmp_path: Path, **sections: dict[str, object]) -> tuple[Raggity, dict[str, Path], Path]:
    config = write_config(tmp_path, ingest={"chunk_tokens": 64}, **sections)
    files = write_corpus(tmp_path / "docs")
    return session(config), files, tmp_path / "docs"


def test_first_ingest_then_nothing_changed(tmp_path: Path) -> None:
    s, files, docs = setup(tmp_path)
    first = s.ingest([docs])
    assert (first.added, first.changed, first.removed, first.unchanged) == (len(files), 0, 0, 0)
    assert first.skipped == ()
    assert not first.rebuilt
    ids = store_ids(s.layout)
    assert first.chunks_written == len(ids) > len(files)
    assert set(source_ids(s)) == {str(p) for p in files.values()}

    counting = RecordingEmbedder(s.models.embedder)
    s = Raggity(s.config, embedder=counting, tokenizer=s.models.tokenizer)
    second = s.ingest([docs])
    assert (second.added, second.changed, second.removed, second.unchanged) == (0, 0, 0, len(files))
    assert second.chunks_written == 0
    assert counting.texts == []
    assert store_ids(s.layout) == ids


def test_modified_file_replaces_only_its_changed_chunks(tmp_path: Path) -> None:
    s, files, docs = setup(tmp_path)
    s.ingest([docs])
    store_ids(s.layout)
    before = source_ids(s)
    target = files["text"]
    text = target.read_text(encoding="utf-8")
    old_paragraph = (
        "Shape the loaf, proof it in a floured banneton, then bake it at 250 degrees in a Dutch oven."
    )
    assert old_paragraph in text
    target.write_text(
        text.replace(old_paragraph, "Cool the baked loaf on a wire rack for an hour before slicing it."),
        encoding="utf-8",
    )

    report = s.ingest([docs])
    assert (report.added, report.changed, report.removed, report.unchanged) == (0, 1, 0, len(files) - 1)
    ids = store_ids(s.layout)
    after = source_ids(s)
    old_only = before[str(target)] - after[str(target)]
    new_only = after[str(target)] - before[str(target)]
    kept = before[str(target)] & after[str(target)]
    assert old_only, "the edited paragraph's chunk should have a new id"
    assert kept, "chunks of the untouched paragraphs keep their ids"
    assert not old_only & ids
    assert new_only <= ids
    # Only chunks with new text were embedded again.
    assert report.chunks_written == len(new_only)
    for source, chunk_ids in before.items():
        if source != str(target):
            assert after[source] == chunk_ids
    hit = s.search("cool the loaf on a wire rack before slicing", k=1).candidates[0]
    assert hit.chunk.source == str(target)
    assert "wire rack" in hit.chunk.text


def test_deleted_file_loses_its_chunks_everywhere(tmp_path: Path) -> None:
    s, files, docs = setup(tmp_path)
    s.ingest([docs])
    store_ids(s.layout)
    before = source_ids(s)
    files["rst"].unlink()

    report = s.ingest([docs])
    assert (report.added, report.changed, report.removed, report.unchanged) == (0, 0, 1, len(files) - 1)
    assert report.chunks_written == 0
    ids = store_ids(s.layout)
    assert str(files["rst"]) not in source_ids(s)
    assert not before[str(files["rst"])] & ids
    assert ids == set().union(*(v for k, v in before.items() if k != str(files["rst"])))


def test_renamed_file_is_found_under_its_new_path(tmp_path: Path) -> None:
    s, files, docs = setup(tmp_path)
    s.ingest([docs])
    store_ids(s.layout)
    old = files["rst"]
    old_ids = source_ids(s)[str(old)]
    new = old.with_name("galilean.rst")
    old.rename(new)

    report = s.ingest([docs])
    assert (report.added, report.removed, report.changed) == (1, 1, 0)
    ids = store_ids(s.layout)
    sources = source_ids(s)
    assert str(old) not in sources
    assert sources[str(new)] <= ids
    assert not old_ids & ids
    hit = s.search("Galilean satellites Io Europa Ganymede Callisto", k=1).candidates[0]
    assert hit.chunk.source == str(new)


def test_touched_file_is_not_embedded_again(tmp_path: Path) -> None:
    s, files, docs = setup(tmp_path)
    s.ingest([docs])
    ids = store_ids(s.layout)
    target = files["markdown"]
    stat = target.stat()
    # Moved into the past, beyond the window where a stamp is too recent to trust (api/sources.py).
    later = stat.st_mtime_ns - 60_000_000_000
    os.utime(target, ns=(later, later))

    counting = RecordingEmbedder(s.models.embedder)
    s = Raggity(s.config, embedder=counting, tokenizer=s.models.tokenizer)
    report = s.ingest([docs])
    assert (report.added, report.changed, report.removed, report.unchanged) == (0, 0, 0, len(files))
    assert report.chunks_written == 0
    assert report.tokens_embedded == 0
    assert counting.texts == []
    assert store_ids(s.layout) == ids
    # The new mtime is recorded, so the next run does not hash the file again.
    assert load_manifest(s.layout.manifest).sources[str(target)].mtime_ns == later


def test_changing_chunk_tokens_rebuilds_everything(tmp_path: Path) -> None:
    config = write_config(tmp_path, ingest={"chunk_tokens": 256})
    files = write_corpus(tmp_path / "docs")
    s = session(config)
    assert not s.ingest([tmp_path / "docs"]).rebuilt
    coarse = store_ids(s.layout)

    write_config(tmp_path, ingest={"chunk_tokens": 64})
    s = session(config)
    report = s.ingest([tmp_path / "docs"])
    assert report.rebuilt
    assert report.added == len(files)
    assert report.unchanged == 0
    fine = store_ids(s.layout)
    assert report.chunks_written == len(fine)
    assert len(fine) > len(coarse)
    assert load_manifest(s.layout.manifest).fingerprint.chunk_tokens == 64  # type: ignore[union-attr]

    again = s.ingest([tmp_path / "docs"])
    assert not again.rebuilt
    assert again.chunks_written == 0
    assert store_ids(s.layout) == fine


def test_deletion_is_scoped_to_the_ingested_roots(tmp_path: Path) -> None:
    config = write_config(tmp_path, ingest={"chunk_tokens": 64})
    a_files = write_corpus(tmp_path / "a")
    b_file = tmp_path / "b" / "notes.md"
    b_file.parent.mkdir()
    b_file.write_text("# Notes\n\nThe garden shed key hangs behind the kitchen door.\n", encoding="utf-8")
    s = session(config)

    s.ingest([tmp_path / "a"])
    a_ids = store_ids(s.layout)
    report = s.ingest([tmp_path / "b"])
    assert (report.added, report.removed, report.unchanged) == (1, 0, 0)
    ids = store_ids(s.layout)
    assert a_ids < ids
    assert set(source_ids(s)) == {str(p) for p in a_files.values()} | {str(b_file.resolve())}

    # A file gone from folder A stays indexed while only folder B is ingested ...
    a_files["html"].unlink()
    report = s.ingest([tmp_path / "b"])
    assert (report.removed, report.unchanged) == (0, 1)
    assert store_ids(s.layout) == ids
    assert str(a_files["html"]) in source_ids(s)

    # ... and is removed when folder A is ingested again.
    report = s.ingest([tmp_path / "a"])
    assert (report.removed, report.unchanged) == (1, len(a_files) - 1)
    remaining = store_ids(s.layout)
    assert str(a_files["html"]) not in source_ids(s)
    assert str(b_file.resolve()) in source_ids(s)
    assert remaining < ids


def test_text_inserted_above_moves_the_line_ranges_of_unchanged_chunks(tmp_path: Path) -> None:
    """Unchanged chunks keep their ids and vectors, but their stored lines must follow the edit."""
    from raggity.store.vector_table import VectorTableReader  # noqa: PLC0415 - imported where the test needs it

    config = write_config(tmp_path, ingest={"chunk_tokens": 32})
    notes = tmp_path / "notes"
    notes.mkdir()
    # Each paragraph under its own heading, so chunk boundaries do not shift when text is added above.
    paragraphs = [
        f"## Part {n}\n\nParagraph {n} talks about topic{n} with alpha{n} beta{n} gamma{n}."
        for n in range(12)
    ]
    target = notes / "long.md"
    target.write_text("\n\n".join(paragraphs) + "\n")
    s = session(config)
    s.ingest([notes])
    before = {
        c.chunk.text: c.chunk
        for c in VectorTableReader(s.layout.table).fetch(sorted(store_ids(s.layout))).values()
    }

    target.write_text("New first line.\n\nAnother new line.\n\n" + "\n\n".join(paragraphs) + "\n")
    counting = RecordingEmbedder(s.models.embedder)
    s = Raggity(s.config, embedder=counting, tokenizer=s.models.tokenizer)
    s.ingest([notes])

    after = VectorTableReader(s.layout.table).fetch(sorted(store_ids(s.layout)))
    text = target.read_text()
    kept = [row.chunk for row in after.values() if row.chunk.text in before]
    assert kept, "some chunks' text is unchanged, so their ids must survive"
    for chunk in kept:
        assert chunk.id == before[chunk.text].id
        first_line = text[: text.index(chunk.text.strip())].count("\n") + 1
        assert chunk.location.line_start == first_line == before[chunk.text].location.line_start + 4
    # Only text that did not exist before was embedded again.
    assert counting.texts
    assert all(t not in before for t in counting.texts)


def test_a_rebuild_reindexes_files_of_other_folders_instead_of_dropping_them(tmp_path: Path) -> None:
    config = write_config(tmp_path, ingest={"chunk_tokens": 64})
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, topic in ((first, "volcanoes erupt basalt lava"), (second, "glaciers carve granite valleys")):
        folder.mkdir()
        (folder / "note.md").write_text(f"# Note\n\nThis note explains how {topic}.\n")
    s = session(config)
    s.ingest([first])
    s.ingest([second])
    report = s.ingest([second], rebuild=True)
    assert report.rebuilt
    assert set(source_ids(s)) == {str(first / "note.md"), str(second / "note.md")}
    store_ids(s.layout)  # all three stores agree


def test_queries_refuse_an_index_built_by_another_embedder(tmp_path: Path) -> None:
    import pytest  # noqa: PLC0415 - imported where the test needs it

    from raggity.core.errors import IndexStateError  # noqa: PLC0415 - imported where the test needs it
    from raggity.store.manifest import (  # noqa: PLC0415 - imported where the test needs it
        Fingerprint,
        load_header,
        save_header,
    )

    s, _, docs = setup(tmp_path)
    s.ingest([docs])
    manifest = load_manifest(s.layout.manifest)
    assert manifest.fingerprint is not None
    manifest.fingerprint = Fingerprint("other-model:0123456789abcdef:256", 64, 1024)
    save_header(s.layout.manifest, manifest, load_header(s.layout.manifest).sources_version)
    with pytest.raises(IndexStateError, match="built with embedder other-model") as caught:
        session(tmp_path / "raggity.toml").search("frobnicator")
    assert "--rebuild" in caught.value.hint


def test_a_deleted_folder_that_was_ingested_is_ingested_as_empty(tmp_path: Path) -> None:
    import shutil  # noqa: PLC0415 - imported where the test needs it

    from raggity.core.errors import RaggityError  # noqa: PLC0415 - imported where the test needs it

    config = write_config(tmp_path, ingest={"chunk_tokens": 64})
    write_corpus(tmp_path / "a")
    b_file = tmp_path / "b" / "notes.md"
    b_file.parent.mkdir()
    b_file.write_text("# Notes\n\nThe garden shed key hangs behind the kitchen door.\n", encoding="utf-8")
    s = session(config)
    s.ingest([tmp_path / "a", tmp_path / "b"])
    a_sources = {src for src in source_ids(s) if src != str(b_file.resolve())}
    ids = store_ids(s.layout)

    shutil.rmtree(tmp_path / "b")
    report = s.ingest([tmp_path / "b"])

    assert (report.added, report.removed, report.unchanged) == (0, 1, 0)
    assert set(source_ids(s)) == a_sources
    assert store_ids(s.layout) < ids
    # A path that never held an indexed file is still an error, and writes nothing.
    with pytest.raises(RaggityError, match="no such file or folder"):
        s.ingest([tmp_path / "nowhere"])
    assert set(source_ids(s)) == a_sources


class EmbeddedCounts:
    """Each count of chunks the ingest reports as embedded, in order."""

    def __init__(self) -> None:
        self.embedded: list[int] = []

    def planned(self, files: int, sizes: Mapping[str, int]) -> None:
        pass

    def read(self, kind: str, size: int, chunks: int) -> None:
        pass

    def advanced(self, files: int, chunks: int, tokens: int) -> None:
        if chunks:
            self.embedded.append(chunks)

    def warn(self, source: str, reason: str) -> None:
        pass


def test_a_large_batch_reports_its_progress_slice_by_slice_and_keeps_each_vector_with_its_chunk(
    tmp_path: Path,
) -> None:
    from raggity.pipeline.ingest.reading import EMBED_SLICE  # noqa: PLC0415 - imported where the test needs it
    from raggity.pipeline.ingest.sources import file_source, in_roots  # noqa: PLC0415 - imported where the test needs it
    from raggity.store.vector_table import VectorTableReader  # noqa: PLC0415 - imported where the test needs it

    config = write_config(tmp_path, ingest={"chunk_tokens": 32})
    docs = tmp_path / "docs"
    docs.mkdir()
    # One file of paragraphs of many lengths: more chunks than a slice, all in the first batch.
    paragraphs = [f"Entry {n}: the {'heron ' * (1 + n % 9)}waits by the weir number {n}." for n in range(300)]
    (docs / "long.md").write_text("# Long\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    s = session(config)
    progress = EmbeddedCounts()

    report = s.indexer.index_sources([file_source(docs / "long.md")], in_roots([docs]), progress=progress)

    assert report.chunks_written > EMBED_SLICE
    assert len(progress.embedded) > 1
    assert max(progress.embedded) <= EMBED_SLICE
    assert sum(progress.embedded) == report.chunks_written
    # Embedded in length order, stored in chunk order: every vector is still its own chunk's.
    stored = list(VectorTableReader(s.layout.table).fetch(sorted(store_ids(s.layout))).values())
    alone = np.asarray(s.models.embedder.embed([row.chunk.search_text for row in stored]))
    assert np.allclose(np.stack([row.vector for row in stored]), alone, atol=1e-5)
