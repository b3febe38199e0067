"""raggity writes into, and deletes from, only index folders it created (or adopted): never a stranger's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from raggity.core.errors import IndexLocationError, IndexStateError
from raggity.store.layout import IndexLayout
from raggity.store.ownership import claim_index_folder
from tests.support import assert_clean_error, rag, write_config, write_corpus


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its bytes, and every folder (as b"<dir>")."""
    found: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        found[str(path.relative_to(root))] = b"<dir>" if path.is_dir() else path.read_bytes()
    return found


@pytest.fixture
def foreign(tmp_path: Path) -> Path:
    """Another tool's data folder that happens to use the names raggity uses inside an index."""
    folder = tmp_path / "their-data"
    (folder / "lancedb").mkdir(parents=True)
    (folder / "lancedb" / "vectors.bin").write_bytes(b"their vectors")
    (folder / "tantivy").mkdir()
    (folder / "tantivy" / "meta.json").write_text("{}", encoding="utf-8")
    (folder / "cache").mkdir()
    (folder / "cache" / "entry.json").write_text('{"theirs": true}', encoding="utf-8")
    (folder / "notes.txt").write_text("keep me", encoding="utf-8")
    return folder


@pytest.mark.parametrize("command", [["ingest", "docs"], ["ingest", "docs", "--rebuild"], ["cache", "clear"]])
def test_a_foreign_folder_is_refused_and_left_untouched(
    tmp_path: Path, foreign: Path, command: list[str]
) -> None:
    write_config(tmp_path, index={"path": str(foreign)})
    write_corpus(tmp_path / "docs")
    before = tree(foreign)
    done = rag(*command, cwd=tmp_path)
    assert done.returncode == 8, done.stderr
    line = assert_clean_error(done.stderr)
    assert f"{foreign}: this folder is not empty and is not a raggity index" in line
    assert tree(foreign) == before


def test_a_new_folder_is_marked_and_an_old_index_is_adopted(tmp_path: Path) -> None:
    write_config(tmp_path)
    write_corpus(tmp_path / "docs")
    layout = IndexLayout(tmp_path / ".raggity")
    assert rag("ingest", "docs", cwd=tmp_path).returncode == 0
    assert layout.marker.is_file()
    # An index made before the marker existed: raggity's names only, with its manifest.
    layout.marker.unlink()
    (tmp_path / "docs" / "extra.md").write_text(
        "# Extra\n\nA new note about lighthouses.\n", encoding="utf-8"
    )
    done = rag("ingest", "docs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert layout.marker.is_file()
    assert "1 added" in done.stdout


@pytest.mark.parametrize(
    "command",
    [
        ("ingest", "docs"),
        ("status",),
        ("search", "lighthouse"),
        ("ask", "lighthouse?"),
        ("show", "a.md"),
        ("graph", "stats"),
        ("graph", "show", "lighthouse"),
        ("cache", "stats"),
    ],
)
def test_an_index_path_that_is_a_file_is_refused(tmp_path: Path, command: tuple[str, ...]) -> None:
    # Reading commands too: `rag status` ended in "internal error: NotADirectoryError", and the
    # others said "no index yet", sending the user to an ingest that refuses the path.
    not_a_folder = tmp_path / "index.txt"
    not_a_folder.write_text("a file", encoding="utf-8")
    write_config(tmp_path, index={"path": str(not_a_folder)})
    write_corpus(tmp_path / "docs")
    done = rag(*command, cwd=tmp_path)
    assert done.returncode == 8, done.stderr
    assert f"{not_a_folder}: the index path is a file, not a folder" in assert_clean_error(done.stderr)
    assert not_a_folder.read_text(encoding="utf-8") == "a file"


def test_doctor_says_the_index_path_is_a_file(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "index.txt"
    not_a_folder.write_text("a file", encoding="utf-8")
    write_config(tmp_path, index={"path": str(not_a_folder)})
    done = rag("doctor", cwd=tmp_path)
    assert done.returncode == 1
    assert f"FAIL index: {not_a_folder}: the index path is a file, not a folder" in done.stdout
    assert "rag ingest" not in done.stdout


def test_the_root_folder_is_never_claimed() -> None:
    before = sorted(os.listdir("/"))
    with pytest.raises(IndexLocationError, match="is not empty and is not a raggity index") as caught:
        claim_index_folder(IndexLayout(Path("/")))
    assert caught.value.exit_code == 8
    assert sorted(os.listdir("/")) == before


def test_a_marker_from_a_newer_format_is_refused(tmp_path: Path) -> None:
    layout = IndexLayout(tmp_path / "index")
    claim_index_folder(layout)
    layout.marker.write_text('{"raggity_index": 99}\n', encoding="utf-8")
    with pytest.raises(IndexLocationError, match="newer raggity"):
        claim_index_folder(layout)


def test_an_empty_folder_is_claimed_despite_a_half_written_marker(tmp_path: Path) -> None:
    layout = IndexLayout(tmp_path / "index")
    layout.root.mkdir()
    # What a kill inside the very first atomic write leaves behind (the next ingest removes it).
    (layout.root / "..raggity-index.abc123.tmp").write_text("{", encoding="utf-8")
    claim_index_folder(layout)
    assert layout.marker.is_file()


def _planted_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose `.raggity/` is marked as an index (as a clone could ship it); returns the
    repository and its index folder."""
    repo = tmp_path / "repo"
    write_config(repo)
    write_corpus(repo / "docs")
    index = repo / ".raggity"
    index.mkdir()
    (index / ".raggity-index").write_text('{"raggity_index": 1}\n', encoding="utf-8")
    (index / "manifest.json").write_text('{"fingerprint": null, "sources": {}}', encoding="utf-8")
    return repo, index


def test_cache_clear_refuses_a_cache_folder_that_is_a_link(tmp_path: Path, foreign: Path) -> None:
    """Before, `rag cache clear` deleted every *.json the link pointed at (ownership was checked on the
    index folder only)."""
    repo, index = _planted_repo(tmp_path)
    (index / "cache").symlink_to(foreign / "cache")
    before = tree(foreign)
    result = rag("cache", "clear", cwd=repo)
    assert result.returncode == 4
    line = assert_clean_error(result.stderr)
    assert str(index / "cache") in line
    assert "symbolic link" in line
    assert tree(foreign) == before


def test_the_cache_never_writes_or_evicts_through_a_link(tmp_path: Path, foreign: Path) -> None:
    """Eviction used the same path: a full cache deleted the oldest *.json where the link pointed."""
    from raggity.store.cache_store import CacheStore  # noqa: PLC0415 - only this test uses it

    link = tmp_path / "cache"
    link.symlink_to(foreign / "cache")
    before = tree(foreign)
    store = CacheStore(link, max_entries=0)
    store.put("k" * 64, {"answer": "x"})
    assert store.evict() == 0
    assert store.clear() == 0
    assert store.get("entry") is None
    assert tree(foreign) == before


def test_cache_entries_that_are_links_are_not_deleted_through(tmp_path: Path, foreign: Path) -> None:
    from raggity.store.cache_store import CacheStore  # noqa: PLC0415 - only this test uses it

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "theirs.json").symlink_to(foreign / "cache" / "entry.json")
    before = tree(foreign)
    assert CacheStore(cache).clear() == 0
    assert tree(foreign) == before


@pytest.mark.parametrize(
    "command", [["ingest", "docs"], ["ingest", "docs", "--rebuild"], ["search", "linux"]]
)
def test_stores_linked_into_another_index_are_refused_and_it_stays_whole(
    tmp_path: Path, command: list[str]
) -> None:
    """A repository's `.raggity/lancedb` and `tantivy` linked into the user's own index: before, `rag
    ingest` in the repository deleted every row of that index as leftovers of a killed run."""
    mine = tmp_path / "mine"
    write_config(mine, index={"path": str(mine / "index")})
    write_corpus(mine / "docs")
    assert rag("ingest", "docs", cwd=mine).returncode == 0
    before = tree(mine / "index")
    repo, index = _planted_repo(tmp_path)
    for name in ("lancedb", "tantivy"):
        (index / name).symlink_to(mine / "index" / name)
    result = rag(*command, cwd=repo)
    assert result.returncode == 4, result.stderr
    line = assert_clean_error(result.stderr)
    assert str(index / "lancedb") in line
    assert "symbolic link" in line
    after = tree(mine / "index")
    assert after == before
    assert rag("search", "linux", cwd=mine).returncode == 0


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_a_link_or_fifo_deep_inside_the_index_is_refused_before_writing(tmp_path: Path, kind: str) -> None:
    _, index = _planted_repo(tmp_path)
    outside = tmp_path / "outside.lance"
    outside.mkdir()
    (outside / "data.bin").write_bytes(b"keep")
    (index / "lancedb").mkdir()
    planted = index / "lancedb" / "chunks.lance"
    if kind == "link":
        planted.symlink_to(outside)
    else:
        os.mkfifo(planted)
    with pytest.raises(IndexStateError) as info:
        claim_index_folder(IndexLayout(index))
    assert str(planted) in str(info.value)
    assert (outside / "data.bin").read_bytes() == b"keep"
