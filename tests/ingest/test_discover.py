"""File discovery: ignore files, globs, junk folders, symlinks, size and permission limits, odd names."""

from __future__ import annotations

import errno
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from raggity.config.schema import IngestConfig
from raggity.core.errors import ConfigError
from raggity.documents.discover import Discovery, SkippedFile, discover, is_supported


def make(root: Path, *names: str, content: str = "text\n") -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def found(discovery: Discovery, root: Path) -> list[str]:
    return [str(path.relative_to(root)) for path in discovery.files]


def run(root: Path, **settings: object) -> Discovery:
    return discover([root], IngestConfig(**settings))  # type: ignore[arg-type]


def reasons(discovery: Discovery, root: Path) -> dict[str, str]:
    return {str(Path(s.path).relative_to(root)): s.reason for s in discovery.skipped}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder.resolve()


# --- basics ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        *("a.md", "b.MARKDOWN", "c.txt", "d.rst", "e.html", "f.htm", "g.pdf", "h.py", "i.tsx", "j.yml"),
        *("k.R", "Makefile", "Dockerfile", "README", "LICENSE", "makefile"),
        *("l.docx", "m.XLSX", "n.pptx", "o.ipynb", "p.eml", "q.mbox", "r.epub", "s.odt", "t.csv", "u.rtf"),
        # Images are read by OCR ([ingest] ocr), or skipped with a line that says why.
        *("v.png", "w.JPG", "x.jpeg", "y.tif", "z.tiff"),
    ],
)
def test_supported(name: str) -> None:
    assert is_supported(Path("some/folder") / name)


@pytest.mark.parametrize("name", ["a.gif", "b.wpd", "c", ".env", ".gitignore", "d.md.bak", "e.exe", ".md"])
def test_not_supported(name: str) -> None:
    assert not is_supported(Path(name))


def test_finds_supported_files_sorted_absolute_and_ignores_the_rest_silently(root: Path) -> None:
    make(root, "b.md", "a.txt", "sub/c.py", "sub/deeper/d.rst", "image.gif", "sub/data.bin", "Makefile")
    discovery = run(root)
    assert found(discovery, root) == ["Makefile", "a.txt", "b.md", "sub/c.py", "sub/deeper/d.rst"]
    assert all(path.is_absolute() for path in discovery.files)
    assert list(discovery.files) == sorted(discovery.files)
    assert discovery.skipped == ()


def test_relative_root_gives_absolute_paths(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(root, "a.md")
    monkeypatch.chdir(root.parent)
    assert discover([Path("root")], IngestConfig()).files == (root / "a.md",)


def test_binary_content_is_for_the_reader_to_judge(root: Path) -> None:
    (root / "blob.txt").write_bytes(b"\x00\x01\x02")
    assert found(run(root), root) == ["blob.txt"]


def test_junk_folders_are_not_entered(root: Path) -> None:
    junk = [".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox"]
    junk += [".mypy_cache", ".pytest_cache", ".raggity"]
    make(root, "keep.md", "sub/keep.md", *(f"{name}/x.md" for name in junk), "sub/node_modules/y.md")
    assert found(run(root), root) == ["keep.md", "sub/keep.md"]


def test_other_hidden_folders_are_read_when_asked(root: Path) -> None:
    make(root, ".github/workflows/ci.yml", ".notes/a.md")
    assert found(run(root, include_hidden=True), root) == [".github/workflows/ci.yml", ".notes/a.md"]


def test_a_root_named_like_junk_is_still_read(tmp_path: Path) -> None:
    make(tmp_path / "venv", "a.md")
    assert found(run(tmp_path / "venv"), tmp_path / "venv") == ["a.md"]


# --- roots ----------------------------------------------------------------------------------------


def test_file_roots_are_taken_as_given(root: Path) -> None:
    make(root, "a.md", "b.txt", "ignored.md", ".gitignore")
    (root / ".gitignore").write_text("ignored.md\n")
    discovery = discover([root / "ignored.md", root / "a.md"], IngestConfig(include=["*.txt"]))
    assert found(discovery, root) == ["a.md", "ignored.md"]


def test_unsupported_or_missing_roots_are_reported(root: Path) -> None:
    make(root, "photo.gif")
    discovery = discover([root / "photo.gif", root / "missing"], IngestConfig())
    assert discovery.files == ()
    assert reasons(discovery, root) == {"photo.gif": "unsupported file type", "missing": "not found"}


def test_overlapping_roots_list_each_file_once(root: Path) -> None:
    make(root, "a.md", "sub/b.md")
    discovery = discover([root, root / "sub", root / "sub" / "b.md", root], IngestConfig())
    assert found(discovery, root) == ["a.md", "sub/b.md"]


def test_root_reached_through_a_link_is_resolved(root: Path, tmp_path: Path) -> None:
    make(root, "a.md")
    (tmp_path / "alias").symlink_to(root)
    assert discover([tmp_path / "alias"], IngestConfig()).files == (root / "a.md",)


# --- ignore files and globs -----------------------------------------------------------------------


def test_gitignore_semantics_nested_negation_and_folders(root: Path) -> None:
    make(root, "a.md", "keep.md", "drop.md", "build/out.md", "build/keep.md", "notes.txt")
    make(root, "docs/a.md", "docs/b.md", "docs/build/x.md", "docs/sub/c.md", "docs/sub/d.txt")
    (root / ".gitignore").write_text("*.md\n!keep.md\nbuild/\n!build/keep.md\n")
    # Nested: re-include markdown below docs, then ignore b.md and anchored /sub/d.txt there.
    (root / "docs" / ".gitignore").write_text("!*.md\nb.md\n/sub/d.txt\n")
    assert found(run(root), root) == ["docs/a.md", "docs/sub/c.md", "keep.md", "notes.txt"]


def test_ragignore_is_honoured_too(root: Path) -> None:
    make(root, "a.md", "private/b.md", "c.md")
    (root / ".ragignore").write_text("private/\n")
    (root / ".gitignore").write_text("c.md\n")
    assert found(run(root), root) == ["a.md"]


def test_ignore_files_are_configurable(root: Path) -> None:
    make(root, "a.md", "b.md")
    (root / ".gitignore").write_text("a.md\n")
    (root / ".myignore").write_text("b.md\n")
    assert found(run(root, ignore_files=[".myignore"]), root) == ["a.md"]
    assert found(run(root, ignore_files=[]), root) == ["a.md", "b.md"]


def test_allow_list_gitignore_idiom(root: Path) -> None:
    make(root, "a.md", "a.txt", "docs/b.md", "docs/b.txt")
    (root / ".gitignore").write_text("*\n!*/\n!*.md\n")
    assert found(run(root), root) == ["a.md", "docs/b.md"]


def test_unreadable_ignore_file_is_reported(root: Path, refuse: set[str]) -> None:
    make(root, "a.md", "b.md")
    (root / ".gitignore").write_text("b.md\n")
    refuse.add(str(root / ".gitignore"))
    discovery = run(root)
    assert found(discovery, root) == ["a.md", "b.md"]
    assert reasons(discovery, root) == {".gitignore": "ignore file unreadable: permission denied"}


def test_ignore_file_that_is_not_a_regular_file_is_passed_over(root: Path) -> None:
    make(root, "a.md", "sub/b.md")
    os.mkfifo(root / ".gitignore")
    (root / "sub" / ".ragignore").mkdir()
    discovery = run(root)
    assert found(discovery, root) == ["a.md", "sub/b.md"]
    assert discovery.skipped == ()


def test_include_globs_are_relative_to_the_root(root: Path) -> None:
    make(root, "a.md", "a.txt", "docs/b.txt", "docs/deep/c.py", "other/docs/d.txt")
    assert found(run(root, include=["*.md"]), root) == ["a.md"]
    assert found(run(root, include=["docs/**"]), root) == ["docs/b.txt", "docs/deep/c.py"]
    assert found(run(root, include=["/docs/*.txt", "*.md"]), root) == ["a.md", "docs/b.txt"]


def test_exclude_globs(root: Path) -> None:
    make(root, "a.md", "a.txt", "drafts/b.md", "drafts/keep.md", "sub/drafts/c.md")
    discovery = run(root, exclude=["*.txt", "drafts/"])
    assert found(discovery, root) == ["a.md"]
    assert discovery.skipped == ()
    assert found(run(root, exclude=["/drafts/"]), root) == ["a.md", "a.txt", "sub/drafts/c.md"]


def test_exclude_with_negation_still_looks_inside_folders(root: Path) -> None:
    make(root, "a.md", "drafts/b.md", "drafts/keep.md")
    assert found(run(root, exclude=["drafts/*", "!drafts/keep.md"]), root) == ["a.md", "drafts/keep.md"]


def test_include_and_exclude_together(root: Path) -> None:
    make(root, "a.md", "b.md", "c.txt")
    assert found(run(root, include=["*.md"], exclude=["b.md"]), root) == ["a.md"]


def test_invalid_glob_is_a_config_error(root: Path) -> None:
    with pytest.raises(ConfigError, match=r"ingest\.include"):
        run(root, include=["[z-a]"])


# --- symlinks -------------------------------------------------------------------------------------


def test_link_to_a_file_inside_the_root_is_listed_once_under_its_real_path(root: Path) -> None:
    make(root, "real/a.md")
    (root / "alias.md").symlink_to(root / "real" / "a.md")
    (root / "zz-alias.md").symlink_to("real/a.md")
    discovery = run(root)
    assert found(discovery, root) == ["real/a.md"]
    assert discovery.skipped == ()


def test_link_to_a_folder_inside_the_root_is_walked_once(root: Path) -> None:
    make(root, "docs/a.md", "docs/sub/b.md")
    (root / "aaa-link").symlink_to(root / "docs", target_is_directory=True)
    discovery = run(root)
    assert found(discovery, root) == ["docs/a.md", "docs/sub/b.md"]
    assert discovery.skipped == ()


def test_file_only_reachable_through_an_inside_link_keeps_the_link_path(root: Path) -> None:
    make(root, "node_modules/pkg/readme.md")
    (root / "pkg-readme.md").symlink_to(root / "node_modules" / "pkg" / "readme.md")
    assert found(run(root), root) == ["pkg-readme.md"]


def test_symlink_loops_never_hang(root: Path) -> None:
    make(root, "a/b/c.md")
    (root / "a" / "b" / "up").symlink_to(root / "a", target_is_directory=True)
    (root / "self").symlink_to(root, target_is_directory=True)
    (root / "ping").symlink_to(root / "pong")
    (root / "pong").symlink_to(root / "ping")
    (root / "a" / "b" / "x").symlink_to(root / "a" / "b" / "y")
    (root / "a" / "b" / "y").symlink_to(root / "a" / "b" / "x")
    discovery = run(root)
    assert found(discovery, root) == ["a/b/c.md"]
    assert reasons(discovery, root) == {
        "a/b/up": "symlink loop",
        "self": "symlink loop",
        "ping": "symlink loop",
        "pong": "symlink loop",
        "a/b/x": "symlink loop",
        "a/b/y": "symlink loop",
    }


def test_mutual_folder_links_terminate(root: Path) -> None:
    make(root, "a/x.md", "b/y.md")
    (root / "a" / "to-b").symlink_to(root / "b", target_is_directory=True)
    (root / "b" / "to-a").symlink_to(root / "a", target_is_directory=True)
    assert found(run(root), root) == ["a/x.md", "b/y.md"]


def test_links_outside_the_root_are_skipped_unless_followed(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    make(outside, "o.md", "sub/p.md")
    make(root, "a.md")
    (root / "ext.md").symlink_to(outside / "o.md")
    (root / "ext-dir").symlink_to(outside, target_is_directory=True)

    skipped = run(root)
    assert found(skipped, root) == ["a.md"]
    assert reasons(skipped, root) == {
        "ext.md": f"link points outside {root}",
        "ext-dir": f"link points outside {root}",
    }

    followed = run(root, follow_symlinks=True)
    assert found(followed, root) == ["a.md", "ext-dir/o.md", "ext-dir/sub/p.md"]
    assert followed.skipped == ()


def test_followed_link_to_an_ancestor_of_the_root_is_a_loop(root: Path, tmp_path: Path) -> None:
    make(root, "a.md")
    make(tmp_path, "outside.md")
    (root / "up").symlink_to(tmp_path, target_is_directory=True)
    discovery = run(root, follow_symlinks=True)
    assert found(discovery, root) == ["a.md"]
    assert reasons(discovery, root) == {"up": "symlink loop"}


def test_links_honour_ignore_rules_by_their_own_name(root: Path, tmp_path: Path) -> None:
    make(tmp_path / "outside", "o.md")
    make(root, "a.md")
    (root / "ext.md").symlink_to(tmp_path / "outside" / "o.md")
    (root / ".gitignore").write_text("ext.md\n")
    discovery = run(root)
    assert found(discovery, root) == ["a.md"]
    assert discovery.skipped == ()


def test_broken_links_are_reported(root: Path) -> None:
    make(root, "a.md")
    (root / "gone.md").symlink_to(root / "nowhere.md")
    (root / "gone-folder").symlink_to(root / "no-folder", target_is_directory=True)
    discovery = run(root)
    assert found(discovery, root) == ["a.md"]
    assert reasons(discovery, root) == {"gone.md": "broken link", "gone-folder": "broken link"}


# --- limits and odd files -------------------------------------------------------------------------


def test_files_over_the_size_limit_are_skipped_with_the_setting_to_raise(root: Path) -> None:
    make(root, "small.md")
    make(root, "big.md", content="x" * 20_000)
    discovery = run(root, max_file_mb=0.01)
    assert found(discovery, root) == ["small.md"]
    assert reasons(discovery, root) == {"big.md": "larger than 0.01 MB (raise ingest.max_file_mb)"}
    assert found(run(root), root) == ["big.md", "small.md"]


def test_size_limit_is_exact(root: Path) -> None:
    make(root, "exact.md", content="x" * 1_048_576)
    assert found(run(root, max_file_mb=1.0), root) == ["exact.md"]
    make(root, "exact.md", content="x" * 1_048_577)
    assert found(run(root, max_file_mb=1.0), root) == []


@pytest.fixture
def refuse(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Paths that os.open refuses with EACCES, as for a non-root user and a chmod 000 file.

    Tests may run as root, who can open a chmod 000 file, so the refusal is simulated.
    """
    refused: set[str] = set()
    real_open = os.open

    def refusing_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        name = os.fsdecode(path)  # type: ignore[arg-type]
        folder = kwargs.get("dir_fd")
        if folder is not None:  # a file opened one folder at a time (raggity.core.beneath)
            name = os.path.join(os.readlink(f"/proc/self/fd/{folder}"), name)
        if name in refused:
            raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))  # type: ignore[arg-type]
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refusing_open)
    return refused


def test_unreadable_files_are_skipped(root: Path, refuse: set[str]) -> None:
    make(root, "ok.md", "secret.md")
    (root / "secret.md").chmod(0)
    refuse.add(str(root / "secret.md"))
    discovery = run(root)
    assert found(discovery, root) == ["ok.md"]
    assert reasons(discovery, root) == {"secret.md": "unreadable: permission denied"}


def as_unprivileged(work: Callable[[], Discovery]) -> Discovery:
    """Run `work` as a user without root's read-anything privilege (in a forked child when root)."""
    if os.geteuid() != 0:
        return work()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        status = 0
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            payload: object = work()
        except BaseException as exc:
            payload, status = repr(exc), 1
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(pickle.dumps(payload))
        os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        payload = pickle.loads(pipe.read())
    _, status = os.waitpid(pid, 0)
    assert status == 0, payload
    assert isinstance(payload, Discovery)
    return payload


NOBODY = 65534


def test_unreadable_files_are_skipped_for_real() -> None:
    # tmp_path lies in a folder only root may enter, so the unprivileged walk needs its own.
    base = Path(tempfile.mkdtemp(prefix="raggity-test-")).resolve()
    try:
        base.chmod(0o755)
        make(base, "ok.md", "secret.md")
        (base / "ok.md").chmod(0o644)
        (base / "secret.md").chmod(0)
        discovery = as_unprivileged(lambda: discover([base], IngestConfig()))
    finally:
        shutil.rmtree(base)
    assert found(discovery, base) == ["ok.md"]
    assert reasons(discovery, base) == {"secret.md": "unreadable: permission denied"}


def test_unreadable_folders_are_skipped(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(root, "ok.md", "locked/a.md")
    locked = str(root / "locked")
    real_scandir = os.scandir

    def refusing_scandir(path: str) -> object:
        if path == locked:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", refusing_scandir)
    discovery = run(root)
    assert found(discovery, root) == ["ok.md"]
    assert reasons(discovery, root) == {"locked": "unreadable folder: permission denied"}


def test_special_files_with_known_names_are_reported(root: Path) -> None:
    make(root, "a.md")
    os.mkfifo(root / "pipe.md")
    os.mkfifo(root / "pipe.unknown")
    discovery = run(root)
    assert found(discovery, root) == ["a.md"]
    assert reasons(discovery, root) == {"pipe.md": "not a regular file"}


def test_very_deep_folders(root: Path) -> None:
    folder = root
    for _ in range(300):
        folder = folder / "d"
    make(folder, "deep.md")
    (folder / ".gitignore").write_text("nothing-here\n")
    discovery = run(root)
    assert discovery.files == (folder / "deep.md",)


def test_odd_names(root: Path) -> None:
    names = [
        "with space.md",
        "ünïcödé/文档.md",
        "new\nline.md",
        "new\nline dir/x.txt",
        "-dash.md",
        "#hash.md",
    ]
    make(root, *names)
    assert sorted(found(run(root), root)) == sorted(names)


def test_odd_names_in_ignore_rules(root: Path) -> None:
    make(root, "with space.md", "new\nline/x.md", "文档.md", "keep.txt")
    (root / ".gitignore").write_text("with\\ space.md\n*.md\n")
    assert found(run(root), root) == ["keep.txt"]


def test_skipped_file_is_a_value() -> None:
    assert SkippedFile("a", "binary file") == SkippedFile("a", "binary file")
    with pytest.raises(AttributeError):
        SkippedFile("a", "b").reason = "c"  # type: ignore[misc]
