"""Find the files to ingest under the given roots, and say why any that look readable are skipped.

Folders are walked with an explicit stack (no recursion limit, no hang on symlink loops). In every
folder the ignore files named by ingest.ignore_files apply with gitignore semantics relative to that
folder; ingest.include and ingest.exclude globs apply to paths relative to the root. Parent folders
of a root are not consulted: the root's own ignore files are the outermost.

Paths are returned absolute: the root with its symlinks resolved, then the path below it as found,
so a file reached through a link keeps the link's name. When one file is reachable by several paths
(links inside the root), it is listed once, preferably under a path that is not a link. Files named
directly as roots are always taken if raggity can read their type; ignore rules and globs are for
what a walk finds.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

from raggity.config.schema import IngestConfig
from raggity.core.errors import ConfigError
from raggity.ingest.ignore import IgnoreRules, match_form, parse_ignore_file
from raggity.ingest.readers.kinds import kind_of

# Version-control internals, dependency trees, caches and raggity's own index are never documents.
JUNK_FOLDERS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".raggity",
    }
)  # fmt: skip
_MB = 1024 * 1024
# Non-blocking, so that opening a FIFO cannot stall discovery.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class SkippedFile:
    """A file that looks like something raggity reads but will not be read, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class Discovery:
    files: tuple[Path, ...]
    skipped: tuple[SkippedFile, ...]


def is_supported(path: Path) -> bool:
    """Whether raggity reads files named like `path` (known extension or well-known file name)."""
    return kind_of(path) is not None


def discover(roots: Sequence[Path], config: IngestConfig) -> Discovery:
    """Every file to read under `roots` (files or folders), sorted and without duplicates."""
    found = _Found()
    include = _compile_globs(config.include, "ingest.include")
    exclude = _compile_globs(config.exclude, "ingest.exclude")
    for root in roots:
        _Walk(root, config, include, exclude, found).run()
    return found.result()


def _compile_globs(globs: Sequence[str], key: str) -> GitIgnoreSpec | None:
    if not globs:
        return None
    try:
        return GitIgnoreSpec.from_lines(globs)
    except (ValueError, re.error) as exc:
        raise ConfigError(f"{key}: invalid glob: {exc}", "use gitignore-style patterns") from exc


@dataclass
class _Found:
    """Files and skips by real path, so that one file reached twice is reported once."""

    files: dict[str, tuple[Path, bool]] = field(default_factory=dict)
    skipped: dict[str, tuple[SkippedFile, bool]] = field(default_factory=dict)

    def add_file(self, real: str, path: Path, via_link: bool) -> None:
        if _better(path, via_link, self.files.get(real)):
            self.files[real] = (path, via_link)

    def skip(self, key: str, path: str, reason: str, via_link: bool = False) -> None:
        skipped = SkippedFile(path=path, reason=reason)
        current = self.skipped.get(key)
        if (
            current is None
            or (current[1] and not via_link)
            or (current[1] == via_link and path < current[0].path)
        ):
            self.skipped[key] = (skipped, via_link)

    def result(self) -> Discovery:
        listed = set(self.files)
        return Discovery(
            files=tuple(sorted(path for path, _ in self.files.values())),
            # A file skipped under one path but listed under another is not skipped.
            skipped=tuple(
                sorted(
                    (entry for key, (entry, _) in self.skipped.items() if key not in listed),
                    key=lambda entry: entry.path,
                )
            ),
        )


def _better(path: Path, via_link: bool, current: tuple[Path, bool] | None) -> bool:
    if current is None:
        return True
    current_path, current_via_link = current
    if via_link != current_via_link:
        return current_via_link
    return str(path) < str(current_path)


@dataclass(frozen=True)
class _Folder:
    path: str  # as found
    real: str  # symlinks resolved
    rel: str  # relative to the root, "/"-separated, "" for the root itself
    rules: IgnoreRules
    via_link: bool


class _Walk:
    """One root's walk; real folders first, folders behind links after, each real folder once."""

    def __init__(
        self,
        root: Path,
        config: IngestConfig,
        include: GitIgnoreSpec | None,
        exclude: GitIgnoreSpec | None,
        found: _Found,
    ) -> None:
        self.given = root
        self.config = config
        self.include = include
        self.exclude = exclude
        self.found = found
        self.max_bytes = config.max_file_mb * _MB
        self.root_real = os.path.realpath(root)
        self.visited: set[str] = set()
        # Excluding a folder excludes everything in it, unless a "!" glob could bring some back.
        self.exclude_prunes = exclude is not None and all(
            p.include for p in exclude.patterns if p.include is not None
        )

    def run(self) -> None:
        try:
            st = os.stat(self.given)
        except OSError as exc:
            self.found.skip(str(self.given), str(self.given), _stat_reason(self.given, exc))
            return
        if stat.S_ISDIR(st.st_mode):
            self._walk()
        elif stat.S_ISREG(st.st_mode):
            path = Path(self.root_real)
            if not is_supported(path) and not is_supported(self.given):
                self.found.skip(self.root_real, str(self.given), "unsupported file type")
                return
            self._take(path, self.root_real, st, via_link=False)
        else:
            self.found.skip(self.root_real, str(self.given), "not a regular file")

    def _walk(self) -> None:
        stack = [_Folder(self.root_real, self.root_real, "", IgnoreRules(), via_link=False)]
        behind_links: list[_Folder] = []
        while stack or behind_links:
            if not stack:
                # Link targets wait until every real folder was seen, so a file gets its real path.
                stack.append(behind_links.pop())
            folder = stack.pop()
            if folder.real in self.visited:
                continue
            self.visited.add(folder.real)
            folder = self._with_ignore_files(folder)
            try:
                with os.scandir(folder.path) as scan:
                    entries = sorted(scan, key=lambda entry: entry.name, reverse=True)
            except OSError as exc:
                self.found.skip(folder.real, folder.path, f"unreadable folder: {_os_reason(exc)}")
                continue
            for entry in entries:
                self._visit(folder, entry, stack, behind_links)

    def _with_ignore_files(self, folder: _Folder) -> _Folder:
        rules = folder.rules
        for name in self.config.ignore_files:
            path = os.path.join(folder.path, name)
            try:
                lines = _read_ignore_file(path)
            except OSError as exc:
                # Silently missing rules would ingest what the user asked to leave out.
                self.found.skip(path, path, f"ignore file unreadable: {_os_reason(exc)}")
                continue
            if lines is not None:
                rules = rules.adding(parse_ignore_file(folder.rel, lines))
        return _Folder(folder.path, folder.real, folder.rel, rules, folder.via_link)

    def _visit(
        self, folder: _Folder, entry: os.DirEntry[str], stack: list[_Folder], behind_links: list[_Folder]
    ) -> None:
        rel = folder.rel + entry.name
        try:
            is_link = entry.is_symlink()
            is_dir = not is_link and entry.is_dir(follow_symlinks=False)
        except OSError:
            return
        if is_dir:
            if self._prune(entry.name, rel, folder.rules):
                return
            stack.append(
                _Folder(
                    entry.path,
                    os.path.join(folder.real, entry.name),
                    rel + "/",
                    folder.rules,
                    folder.via_link,
                )
            )
            return
        if not is_link:
            self._visit_file(
                folder, entry.path, os.path.join(folder.real, entry.name), rel, None, folder.via_link
            )
            return
        try:
            target = os.stat(entry.path)
        except OSError as exc:
            # Reported whatever the name: a broken link may well have been meant as a folder.
            if self._selected(rel, folder.rules):
                self.found.skip(entry.path, entry.path, _stat_reason(Path(entry.path), exc), via_link=True)
            return
        real = os.path.realpath(entry.path)
        if stat.S_ISDIR(target.st_mode):
            if self._prune(entry.name, rel, folder.rules):
                return
            if not self._inside(real) and not self.config.follow_symlinks:
                self.found.skip(real, entry.path, f"link points outside {self.root_real}", via_link=True)
                return
            if folder.real == real or folder.real.startswith(real.rstrip(os.sep) + os.sep):
                self.found.skip(real, entry.path, "symlink loop", via_link=True)
                return
            behind_links.append(_Folder(entry.path, real, rel + "/", folder.rules, via_link=True))
            return
        self._visit_file(folder, entry.path, real, rel, target, via_link=True)

    def _visit_file(
        self, folder: _Folder, path: str, real: str, rel: str, st: os.stat_result | None, via_link: bool
    ) -> None:
        name = os.path.basename(path)
        if not self._wanted_file(name, rel, folder.rules):
            return
        if via_link and not self._inside(real) and not self.config.follow_symlinks:
            self.found.skip(real, path, f"link points outside {self.root_real}", via_link=True)
            return
        if st is None:
            try:
                st = os.stat(path, follow_symlinks=False)
            except OSError as exc:
                self.found.skip(real, path, _stat_reason(Path(path), exc), via_link)
                return
        if not stat.S_ISREG(st.st_mode):
            self.found.skip(real, path, "not a regular file", via_link)
            return
        self._take(Path(path), real, st, via_link)

    def _take(self, path: Path, real: str, st: os.stat_result, via_link: bool) -> None:
        if st.st_size > self.max_bytes:
            limit = f"{self.config.max_file_mb:g}"
            self.found.skip(real, str(path), f"larger than {limit} MB (raise ingest.max_file_mb)", via_link)
            return
        reason = _unreadable_reason(path)
        if reason is not None:
            self.found.skip(real, str(path), reason, via_link)
            return
        self.found.add_file(real, path, via_link)

    def _prune(self, name: str, rel: str, rules: IgnoreRules) -> bool:
        if name in JUNK_FOLDERS or rules.ignores(rel, is_dir=True):
            return True
        return (
            self.exclude_prunes
            and self.exclude is not None
            and self.exclude.match_file(match_form(rel) + "/")
        )

    def _wanted_file(self, name: str, rel: str, rules: IgnoreRules) -> bool:
        return is_supported(Path(name)) and self._selected(rel, rules)

    def _selected(self, rel: str, rules: IgnoreRules) -> bool:
        """Not ignored, matched by ingest.include (when set) and not by ingest.exclude."""
        if rules.ignores(rel, is_dir=False):
            return False
        form = match_form(rel)
        if self.include is not None and not self.include.match_file(form):
            return False
        return not (self.exclude is not None and self.exclude.match_file(form))

    def _inside(self, real: str) -> bool:
        root = self.root_real.rstrip(os.sep) + os.sep
        return real == self.root_real or real.startswith(root)


def _read_ignore_file(path: str) -> list[str] | None:
    """The lines of an ignore file, or None when there is no such regular file."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read().decode("utf-8", errors="replace").splitlines()
    finally:
        os.close(fd)


def _unreadable_reason(path: Path) -> str | None:
    """Why the file cannot be opened for reading, or None. Opening, not os.access, so ACLs count too."""
    try:
        # Non-blocking: a FIFO must not stall discovery (and is already excluded as irregular).
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        return (
            f"unreadable: {_os_reason(exc)}"
            if not isinstance(exc, FileNotFoundError)
            else "vanished during discovery"
        )
    os.close(fd)
    return None


def _stat_reason(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if isinstance(exc, FileNotFoundError):
        return "broken link" if os.path.islink(path) else "not found"
    return f"unreadable: {_os_reason(exc)}"


def _os_reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    return (exc.strerror or type(exc).__name__).lower()
