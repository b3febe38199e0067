"""An index that names its files relative to a root ([index] root, issue #45 item 5): a shared index's
names are the same on every checkout, so its citations, `rag show` and the freshness check work on a
teammate's copy; an index written with absolute paths keeps working, and a rebuild renames it."""

from __future__ import annotations

import shutil
from pathlib import Path

from raggity.api.session import Raggity
from raggity.api.show import show_in_config_index
from raggity.config.loader import load_config
from raggity.pipeline.answer.freshness import changed_since_ingest
from raggity.store.manifest import load_manifest
from tests.support import write_config, write_corpus


def _session(checkout: Path, index: Path, root: str | None) -> Raggity:
    settings = {"path": str(index)} | ({} if root is None else {"root": root})
    return Raggity(load_config(write_config(checkout, index=settings)))


def _names(index: Path) -> set[str]:
    return set(load_manifest(index / "manifest.json").sources)


def test_a_shared_index_names_files_from_the_root_and_is_read_on_another_checkout(tmp_path: Path) -> None:
    index = tmp_path / "shared-index"
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    write_corpus(mine / "docs")
    files = len(list((mine / "docs").iterdir()))
    report = _session(mine, index, ".").ingest([mine / "docs"])
    assert report.added == files
    assert _names(index) == {f"docs/{p.name}" for p in (mine / "docs").iterdir()}

    shutil.copytree(mine / "docs", theirs / "docs")  # a teammate's checkout, other mtimes
    session = _session(theirs, index, ".")
    # Their citations name the same files, which open under their own checkout.
    [hit] = session.search("Apple silicon Homebrew", k=1).candidates
    assert hit.chunk.source == "docs/install.md"
    assert (theirs / hit.chunk.source).is_file()
    # rag show takes their absolute path, the printed name, or a citation of either.
    absolute = show_in_config_index(session.config, str(theirs / "docs" / "install.md"))
    assert absolute == show_in_config_index(session.config, "docs/install.md")
    assert {c.source for c in absolute} == {"docs/install.md"}
    assert show_in_config_index(session.config, f"{theirs / 'docs' / 'install.md'}:lines 1-3")
    # Freshness checks their files: unchanged, then an edit of their copy is seen.
    manifest = load_manifest(index / "manifest.json")
    root = str(session.config.source_root)
    assert changed_since_ingest(["docs/install.md"], manifest, root) == ()
    (theirs / "docs" / "install.md").write_text("# Frobnicator\n\nRewritten.\n", encoding="utf-8")
    assert changed_since_ingest(["docs/install.md"], manifest, root) == ("docs/install.md",)
    # Their ingest finds the same names: only the edited file is read again.
    again = session.ingest([theirs / "docs"])
    assert (again.added, again.changed, again.removed, again.unchanged) == (0, 1, 0, files - 1)


def test_an_index_written_with_absolute_paths_keeps_them_until_a_rebuild(tmp_path: Path) -> None:
    index = tmp_path / "index"
    docs = tmp_path / "docs"
    write_corpus(docs)
    _session(tmp_path, index, None).ingest([docs])  # the old way: absolute names
    absolute = {str(p) for p in docs.iterdir()}
    assert _names(index) == absolute

    session = _session(tmp_path, index, ".")
    again = session.ingest([docs])
    assert (again.added, again.removed, again.unchanged, again.chunks_written) == (0, 0, len(absolute), 0)
    assert _names(index) == absolute
    assert show_in_config_index(session.config, str(docs / "install.md"))
    manifest = load_manifest(index / "manifest.json")
    root = str(session.config.source_root)
    assert changed_since_ingest([str(docs / "install.md")], manifest, root) == ()
    (docs / "install.md").write_text("# Frobnicator\n\nRewritten.\n", encoding="utf-8")
    assert changed_since_ingest([str(docs / "install.md")], manifest, root) == (str(docs / "install.md"),)

    rebuilt = session.ingest([docs], rebuild=True)
    assert rebuilt.rebuilt
    assert _names(index) == {f"docs/{p.name}" for p in docs.iterdir()}
    assert show_in_config_index(session.config, str(docs / "install.md"))


def test_files_outside_the_root_keep_absolute_names(tmp_path: Path) -> None:
    index = tmp_path / "project" / "index"
    inside, outside = tmp_path / "project" / "docs", tmp_path / "elsewhere"
    write_corpus(inside)
    write_corpus(outside)
    session = _session(tmp_path / "project", index, ".")
    session.ingest([inside, outside])
    names = _names(index)
    assert {n for n in names if not n.startswith("/")} == {f"docs/{p.name}" for p in inside.iterdir()}
    assert {n for n in names if n.startswith("/")} == {str(p) for p in outside.iterdir()}
    # Ingesting one folder again removes nothing of the other, relative or absolute.
    again = session.ingest([outside])
    assert (again.removed, again.unchanged) == (0, len(list(outside.iterdir())))
    assert _names(index) == names
