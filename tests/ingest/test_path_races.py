"""A folder swapped for a symlink between discovery and reading never leads a read or a hash outside
the ingested folder: files are opened by their real path with no link followed on any component."""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.config.schema import IngestConfig
from raggity.core.beneath import LinkOnPathError, open_no_links
from raggity.documents.discover import discover
from raggity.documents.readers import UnreadableFileError, read_file
from raggity.models.hashing import sha256_file
from raggity.pipeline.ingest.sources import file_source
from tests.support import write_config

SECRET = "The vault passphrase is ZEBRA.\n"
DECOY = "Cats sleep most of the day, mostly in the sun.\n"
PARENT_SWAPPED = "a folder on its path was replaced by a symlink (not followed)"


def swap_for_link(folder: Path, target: Path) -> None:
    """What the attacker does: move `folder` aside and put a link to `target` in its place."""
    folder.rename(folder.with_name(".aside"))
    folder.symlink_to(target, target_is_directory=True)


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(root, its docs/sub/passwords.txt, an outside folder holding a passwords.txt of its own)."""
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "passwords.txt").write_text(SECRET, encoding="utf-8")
    root = tmp_path / "r"
    note = root / "docs" / "sub" / "passwords.txt"
    note.parent.mkdir(parents=True)
    note.write_text(DECOY, encoding="utf-8")
    return root, note, outside


class SwapBeforeReading:
    """An ingest progress display that runs `swap` once, when the files to read are planned: after
    discovery, before the first file is opened. The seam is the ingest's own `progress` argument."""

    def __init__(self, swap: Callable[[], None]) -> None:
        self._swap: Callable[[], None] | None = swap
        self.warnings: list[tuple[str, str]] = []

    def planned(self, files: int, sizes: Mapping[str, int]) -> None:
        if self._swap is not None:
            self._swap()
            self._swap = None

    def advanced(self, files: int, chunks: int, tokens: int) -> None:
        pass

    def read(self, kind: str, size: int, chunks: int) -> None:
        pass

    def warn(self, source: str, reason: str) -> None:
        self.warnings.append((source, reason))


def test_an_ingest_never_reads_a_file_behind_a_parent_folder_swapped_after_discovery(
    tree: tuple[Path, Path, Path],
) -> None:
    root, note, outside = tree
    (root / "docs" / "other.md").write_text("Dogs like long walks in the park.\n", encoding="utf-8")
    session = Raggity(load_config(write_config(root)))
    progress = SwapBeforeReading(lambda: swap_for_link(note.parent, outside))

    report = session.ingest([root / "docs"], progress=progress)

    assert (str(note), PARENT_SWAPPED) in {(s.source, s.reason) for s in report.skipped}
    assert (str(note), PARENT_SWAPPED) in progress.warnings
    assert report.added == 1  # other.md, beside the swapped folder, is read as usual
    indexed = [c.chunk.text for c in session.search("vault passphrase ZEBRA", mode="dense", k=10).candidates]
    assert indexed
    assert not any("ZEBRA" in text for text in indexed)


def test_reading_and_hashing_refuse_a_parent_swapped_between_discovery_and_the_read(
    tree: tuple[Path, Path, Path],
) -> None:
    root, note, outside = tree
    found = discover([root / "docs"], IngestConfig())
    [path] = found.files
    source = file_source(path, real=found.real_paths[path])

    swap_for_link(note.parent, outside)

    with pytest.raises(UnreadableFileError) as caught:
        list(source.read())
    assert caught.value.message == PARENT_SWAPPED
    with pytest.raises(LinkOnPathError):
        source.digest()


@pytest.mark.parametrize("depth", range(4))
def test_a_link_at_any_component_is_refused_and_the_target_never_opened(tmp_path: Path, depth: int) -> None:
    outside = tmp_path / "outside"
    folders = ["a", "b", "c", "d"]
    file = tmp_path.joinpath("root", *folders, "note.md")
    file.parent.mkdir(parents=True)
    file.write_text(DECOY, encoding="utf-8")
    # The outside folder mirrors what lies below the swapped component, so following it would succeed.
    mirrored = outside.joinpath(*folders[depth + 1 :], "note.md")
    mirrored.parent.mkdir(parents=True)
    mirrored.write_text(SECRET, encoding="utf-8")
    real = str(file)
    swap_for_link(tmp_path.joinpath("root", *folders[: depth + 1]), outside)

    with pytest.raises(LinkOnPathError) as caught:
        open_no_links(real)
    assert caught.value.errno == errno.ELOOP
    with pytest.raises(OSError, match="a folder on its path is a symlink"):
        sha256_file(Path(real), follow_symlinks=False)
    with pytest.raises(UnreadableFileError, match="replaced by a symlink"):
        list(read_file(Path(real)))
    # Followed as a plain open would, the path reaches the outside file: the race was real.
    assert Path(real).read_text(encoding="utf-8") == SECRET


def test_the_file_itself_swapped_for_a_link_is_refused(tree: tuple[Path, Path, Path]) -> None:
    _, note, outside = tree
    note.unlink()
    note.symlink_to(outside / "passwords.txt")

    with pytest.raises(OSError, match="Too many levels of symbolic links") as caught:
        open_no_links(note)
    assert caught.value.errno == errno.ELOOP
    assert not isinstance(caught.value, LinkOnPathError)
    with pytest.raises(UnreadableFileError, match=r"^replaced by a symlink \(not followed\)$"):
        list(read_file(note))


def test_a_real_path_opens_and_hashes_as_before(tree: tuple[Path, Path, Path]) -> None:
    _, note, _ = tree
    fd = open_no_links(note)
    with os.fdopen(fd, "rb") as handle:
        assert handle.read() == DECOY.encode()
    expected = hashlib.sha256(DECOY.encode()).hexdigest()
    assert sha256_file(note, follow_symlinks=False) == expected
    relative = os.open(note.parent.parent, os.O_RDONLY)
    try:
        with os.fdopen(open_no_links("sub/passwords.txt", dir_fd=relative), "rb") as handle:
            assert handle.read() == DECOY.encode()
    finally:
        os.close(relative)


def test_dot_dot_is_refused(tree: tuple[Path, Path, Path]) -> None:
    _, note, _ = tree
    with pytest.raises(OSError, match=r"'\.\.' in a path") as caught:
        open_no_links(f"{note.parent}/../sub/passwords.txt")
    assert caught.value.errno == errno.EINVAL


def test_model_files_keep_following_links(tree: tuple[Path, Path, Path]) -> None:
    """Model caches link blobs by design (Hugging Face's snapshots): hashing a model follows them."""
    _, note, outside = tree
    swap_for_link(note.parent, outside)
    assert sha256_file(note) == hashlib.sha256(SECRET.encode()).hexdigest()


def test_a_link_discovery_resolved_on_purpose_is_still_read(tmp_path: Path) -> None:
    """follow_symlinks = true: a folder linked from outside is read by its real path, under the
    link's name, and nothing on the way is followed at read time."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "guide.md").write_text("Herons nest in tall trees near water.\n", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "linked").symlink_to(elsewhere, target_is_directory=True)
    session = Raggity(load_config(write_config(tmp_path, ingest={"follow_symlinks": True})))

    report = session.ingest([docs])

    assert report.added == 1
    assert report.skipped == ()
    [hit] = session.search("herons nest", mode="bm25").candidates
    assert hit.chunk.source == str(docs / "linked" / "guide.md")
