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

A walk also leaves out, by default, and reports as "excluded" (with the reason, not as a failure):
hidden files and folders and credential files (raggity.ingest.private_files), and generated,
minified and vendored files (raggity.ingest.generated). raggity's own index folder is never read,
whatever its name and wherever it is. A name that is not valid UTF-8 cannot be stored in the index:
it is skipped, reported with its undecodable bytes shown as escapes.
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
from raggity.core.beneath import open_no_links
from raggity.core.errors import ConfigError
from raggity.ingest.generated import (
    GENERATED,
    HEAD_BYTES,
    builder_output,
    generated_content,
    generated_name,
    vendored_folder,
)
from raggity.ingest.ignore import IgnoreRules, compile_globs, match_form, parse_ignore_file
from raggity.ingest.private_files import CREDENTIALS, HIDDEN, is_hidden, may_hold_credentials
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

BAD_NAME = "name is not valid UTF-8 (rename it to index it)"
INSIDE_INDEX = "inside raggity's index folder"
PAGE_SOURCE = (
    "the source of an HTML page that is read instead (set [ingest] include_generated = true to read both)"
)
# The markup a page is rendered from: AsciiDoc and plain text (.txt), Markdown, reStructuredText.
_PAGE_SOURCE_KINDS = ("text", "markdown", "rst")


@dataclass(frozen=True)
class SkippedFile:
    """A file that looks like something raggity reads but will not be read, and why.

    A folder left out as a whole is listed once, its path ending in "/".
    """

    path: str
    reason: str


@dataclass(frozen=True)
class Discovery:
    files: tuple[Path, ...]
    # Could not be read (unreadable, too large, bad name...): `rag ingest --strict` fails on these.
    skipped: tuple[SkippedFile, ...]
    # Left out by a default rule the config can lift (hidden, credentials, generated).
    excluded: tuple[SkippedFile, ...] = ()
    # Each file's real path as discovery checked it: read through it (without following links), a
    # file replaced by a link after discovery is not followed out of the root.
    real_paths: dict[Path, str] = field(default_factory=dict)


def is_supported(path: Path) -> bool:
    """Whether raggity reads files named like `path` (known extension or well-known file name)."""
    return kind_of(path) is not None


def discover(roots: Sequence[Path], config: IngestConfig, *, index_dir: Path | None = None) -> Discovery:
    """Every file to read under `roots` (files or folders), sorted and without duplicates.

    `index_dir`: raggity's index folder, never read as documents.
    """
    found = _Found()
    include = _compile_globs(config.include, "ingest.include")
    exclude = _compile_globs(config.exclude, "ingest.exclude")
    index_real = os.path.realpath(index_dir) if index_dir is not None else None
    walks = []
    for root in roots:
        if not valid_name(str(root)):
            found.skip(str(root), str(root), BAD_NAME)
            continue
        walk = _Walk(root, config, include, exclude, found, index_real)
        walk.run()
        walks.append(walk)
    # After every root: `rag ingest rst/ html/` reads the pages after the walk that found their sources.
    for walk in walks:
        walk.settle_page_sources()
    return found.result()


LINKED = "reached through a symlink"
NOT_ABSOLUTE = "not an absolute path"


def recheck(paths: Sequence[Path], config: IngestConfig, *, index_dir: Path | None = None) -> Discovery:
    """Which of `paths`, files an index lists from earlier runs, a walk would still take: each goes
    through the very checks a walk applies to a file it finds (type, name, credentials, hidden,
    generated, size, readable, regular file, not raggity's index), with its own folder as the root.
    No walk vouches for the folders above it, so none of them may be hidden or raggity's, and no part
    of the path may be a link. An index folder may come with a cloned repository: what its manifest
    lists is data to check, not files to read (see docs/ingestion.md, "Rebuilds")."""
    found = _Found()
    index_real = os.path.realpath(index_dir) if index_dir is not None else None
    walks = []
    for path in paths:
        given = str(path)
        if not valid_name(given):
            found.skip(given, given, BAD_NAME)
            continue
        if not path.is_absolute():
            found.skip(given, given, NOT_ABSOLUTE)
            continue
        real = os.path.realpath(path)
        if real != os.path.normpath(given):
            found.skip(real, given, LINKED)
            continue
        folder = os.path.dirname(real)
        above = Path(folder).parts[1:]
        if any(part in JUNK_FOLDERS for part in above):
            found.exclude(real, given, INSIDE_INDEX if ".raggity" in above else HIDDEN)
            continue
        if not config.include_hidden and any(is_hidden(part) for part in above):
            found.exclude(real, given, HIDDEN)
            continue
        walk = _Walk(Path(folder), config, None, None, found, index_real)
        rules = walk._with_ignore_files(_Folder(folder, folder, "", IgnoreRules(), via_link=False)).rules
        walk._visit_file(
            _Folder(folder, folder, "", rules, via_link=False), real, real, path.name, None, via_link=False
        )
        walks.append(walk)
    for walk in walks:
        walk.settle_page_sources()
    return found.result()


def _shown(path: str) -> str:
    """`path` with bytes that are not UTF-8 written as escapes (\\xe9), so that it can be printed
    and stored."""
    return os.fsencode(path).decode("utf-8", errors="backslashreplace")


def valid_name(name: str) -> bool:
    """Whether a path can be stored and watched: a name that is not UTF-8 decodes to surrogates."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _compile_globs(globs: Sequence[str], key: str) -> GitIgnoreSpec | None:
    if not globs:
        return None
    try:
        return compile_globs(globs)
    except (ValueError, re.error) as exc:
        raise ConfigError(f"{key}: invalid glob: {exc}", "use gitignore-style patterns") from exc


@dataclass
class _Found:
    """Files and skips by real path, so that one file reached twice is reported once."""

    files: dict[str, tuple[Path, bool]] = field(default_factory=dict)
    skipped: dict[str, tuple[SkippedFile, bool]] = field(default_factory=dict)
    excluded: dict[str, tuple[SkippedFile, bool]] = field(default_factory=dict)

    def add_file(self, real: str, path: Path, via_link: bool) -> None:
        if _better(path, via_link, self.files.get(real)):
            self.files[real] = (path, via_link)

    def skip(self, key: str, path: str, reason: str, via_link: bool = False) -> None:
        _keep_best(self.skipped, key, SkippedFile(path=path, reason=reason), via_link)

    def exclude(self, key: str, path: str, reason: str, via_link: bool = False) -> None:
        _keep_best(self.excluded, key, SkippedFile(path=path, reason=reason), via_link)

    def result(self) -> Discovery:
        listed = set(self.files)
        return Discovery(
            files=tuple(sorted(path for path, _ in self.files.values())),
            skipped=_unlisted(self.skipped, listed),
            excluded=_unlisted(self.excluded, listed),
            real_paths={path: real for real, (path, _) in self.files.items()},
        )


def _keep_best(
    entries: dict[str, tuple[SkippedFile, bool]], key: str, entry: SkippedFile, via_link: bool
) -> None:
    entry = SkippedFile(_shown(entry.path), entry.reason)
    current = entries.get(key)
    if (
        current is None
        or (current[1] and not via_link)
        or (current[1] == via_link and entry.path < current[0].path)
    ):
        entries[key] = (entry, via_link)


def _unlisted(entries: dict[str, tuple[SkippedFile, bool]], listed: set[str]) -> tuple[SkippedFile, ...]:
    """A file skipped under one path but listed under another is not skipped."""
    return tuple(
        sorted((entry for key, (entry, _) in entries.items() if key not in listed), key=lambda e: e.path)
    )


def _better(path: Path, via_link: bool, current: tuple[Path, bool] | None) -> bool:
    if current is None:
        return True
    current_path, current_via_link = current
    if via_link != current_via_link:
        return current_via_link
    return str(path) < str(current_path)


@dataclass(frozen=True)
class _PageSource:
    """A page's source (git-stash.txt) found beside its page (git-stash.html), or Sphinx's copy of
    it (_sources/intro.rst.txt for intro.html)."""

    path: str
    real: str
    st: os.stat_result | None
    via_link: bool
    page: str


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
        index_real: str | None,
    ) -> None:
        self.given = root
        self.config = config
        self.include = include
        self.exclude = exclude
        self.found = found
        self.index_real = index_real
        self.max_bytes = config.max_file_mb * _MB
        self.root_real = os.path.realpath(root)
        self.visited: set[str] = set()
        # Page sources wait for every root's walk: left out only if their page was read after all.
        self.page_sources: list[_PageSource] = []
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
        if self._in_index(self.root_real):
            self.found.skip(self.root_real, str(self.given), INSIDE_INDEX)
        elif stat.S_ISDIR(st.st_mode):
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
            real = os.path.join(folder.real, entry.name)
            if self._prune(entry.name, rel, folder.rules) or self._left_out_folder(entry.path, real, rel):
                return
            stack.append(_Folder(entry.path, real, rel + "/", folder.rules, folder.via_link))
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
            if self._prune(entry.name, rel, folder.rules) or self._left_out_folder(entry.path, real, rel):
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
        if not self._wanted_file(name, rel, folder.rules) or self._in_index(real):
            return
        reason = self._excluded_file_reason(name, rel, path)
        if reason is not None:
            self.found.exclude(real, path, reason, via_link)
            return
        page = None if self.config.include_generated else _page_beside(path) or _page_copied_from(real)
        if page is not None:
            self.page_sources.append(_PageSource(path, real, st, via_link, page))
            return
        self._check_and_take(path, real, st, via_link)

    def settle_page_sources(self) -> None:
        """A page's source is left out when its page was read; when the page was not (too large,
        a link outside the root...), the source is the only copy, and is read."""
        for source in self.page_sources:
            if os.path.realpath(source.page) in self.found.files:
                self.found.exclude(source.real, source.path, PAGE_SOURCE, source.via_link)
            else:
                self._check_and_take(source.path, source.real, source.st, source.via_link)

    def _check_and_take(self, path: str, real: str, st: os.stat_result | None, via_link: bool) -> None:
        if not valid_name(path):
            self.found.skip(real, path, BAD_NAME, via_link)
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
        reason = _unreadable_reason(real)
        if reason is not None:
            self.found.skip(real, str(path), reason, via_link)
            return
        if self._generated_content(path, real, st):
            self.found.exclude(real, str(path), GENERATED, via_link)
            return
        self.found.add_file(real, path, via_link)

    def _left_out_folder(self, path: str, real: str, rel: str) -> bool:
        """Whether a folder the rules do not prune is left out all the same, reporting why."""
        if self._in_index(real):
            return True  # raggity's own files: nothing to report
        reason = None
        if not self.config.include_hidden and is_hidden(os.path.basename(path)):
            reason = HIDDEN
        elif not self.config.include_generated and vendored_folder(rel):
            reason = GENERATED
        elif not valid_name(path):
            self.found.skip(real, path + "/", BAD_NAME)
            return True
        if reason is None:
            return False
        self.found.exclude(real, path + "/", reason)
        return True

    def _excluded_file_reason(self, name: str, rel: str, path: str) -> str | None:
        if may_hold_credentials(name):
            return CREDENTIALS
        if not self.config.include_hidden and is_hidden(name):
            return HIDDEN
        if not self.config.include_generated and (generated_name(rel) or builder_output(path)):
            return GENERATED
        return None

    def _generated_content(self, path: Path, real: str, st: os.stat_result) -> bool:
        """Only code and data are judged by content: prose may well have a paragraph per line."""
        if self.config.include_generated or path == Path(self.root_real) or kind_of(path) != "code":
            return False
        try:
            with os.fdopen(open_no_links(real, _OPEN_FLAGS), "rb") as handle:
                head = handle.read(HEAD_BYTES)
        except OSError:
            return False  # the reader will report it
        text = head.decode("utf-8", errors="replace")
        return generated_content(path.suffix, text, whole=st.st_size <= len(head))

    def _in_index(self, real: str) -> bool:
        index = self.index_real
        return index is not None and (real == index or real.startswith(index.rstrip(os.sep) + os.sep))

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


def _page_beside(path: str) -> str | None:
    """The HTML page beside `path` when `path` is the markup it was rendered from ("git-stash.txt"
    next to "git-stash.html", as git's documentation ships): read both, every page is indexed
    twice and takes two of the top results. The HTML is read, the one with includes expanded.
    Whether the page is read after all (not ignored, excluded, generated or too large) is settled
    at the end of discovery."""
    if kind_of(Path(path)) not in _PAGE_SOURCE_KINDS:
        return None
    stem = os.path.splitext(path)[0]
    for page_path in (f"{stem}.html", f"{stem}.htm"):
        if os.path.isfile(page_path):
            return page_path
    return None


def _page_copied_from(real: str) -> str | None:
    """The HTML page whose source Sphinx copied to `real` (html/_sources/guide/intro.rst.txt for
    html/guide/intro.html). The _sources folder itself is left out as generated, but Debian's
    packages link it as rst/ beside html/, and through the link every page was read twice."""
    build, marker, copied = real.rpartition(f"{os.sep}_sources{os.sep}")
    if not marker:
        return None
    # Sphinx names the copy <page><source suffix>.txt ("intro.rst.txt", whatever the project's
    # source suffix); before 1.5, <page>.txt. The name without ".txt" is tried first, so that
    # "v1.2.txt" is the copy of "v1.2.html".
    page = copied.removesuffix(".txt")
    for name in (page, os.path.splitext(page)[0]):
        for candidate in (f"{name}.html", os.path.join(name, "index.html")):
            page_path = os.path.join(build, candidate)
            if os.path.isfile(page_path):
                return page_path
    return None


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


def _unreadable_reason(real: str) -> str | None:
    """Why the file cannot be opened for reading, or None. Opening, not os.access, so ACLs count too."""
    # By its real path with no link followed on it (raggity.core.beneath), as ingest will open it.
    try:
        fd = open_no_links(real, _OPEN_FLAGS)
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
