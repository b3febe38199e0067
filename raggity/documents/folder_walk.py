"""One root's walk: folders with an explicit stack, each real folder once, and every rule that
takes or leaves out a file it finds (see raggity.documents.discover for the rules themselves)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

from raggity.config.schema import IngestConfig
from raggity.core.beneath import open_no_links
from raggity.documents.discovery_result import Found
from raggity.documents.file_probes import (
    OPEN_FLAGS,
    os_reason,
    read_ignore_file,
    stat_reason,
    unreadable_reason,
)
from raggity.documents.generated import (
    GENERATED,
    HEAD_BYTES,
    builder_output,
    generated_content,
    generated_name,
    vendored_folder,
)
from raggity.documents.ignore import IgnoreRules, match_form, parse_ignore_file
from raggity.documents.page_sources import PAGE_SOURCE, PageSource, page_beside, page_copied_from
from raggity.documents.private_files import CREDENTIALS, HIDDEN, is_hidden, may_hold_credentials
from raggity.documents.readers.kinds import kind_of

# Version-control internals, dependency trees, caches and raggity's own index are never documents.
JUNK_FOLDERS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".raggity",
    }
)  # fmt: skip
_MB = 1024 * 1024

BAD_NAME = "name is not valid UTF-8 (rename it to index it)"
INSIDE_INDEX = "inside raggity's index folder"


def is_supported(path: Path) -> bool:
    """Whether raggity reads files named like `path` (known extension or well-known file name)."""
    return kind_of(path) is not None


def valid_name(name: str) -> bool:
    """Whether a path can be stored and watched: a name that is not UTF-8 decodes to surrogates."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(frozen=True)
class Folder:
    path: str  # as found
    real: str  # symlinks resolved
    rel: str  # relative to the root, "/"-separated, "" for the root itself
    rules: IgnoreRules
    via_link: bool


class Walk:
    """One root's walk; real folders first, folders behind links after, each real folder once."""

    def __init__(
        self,
        root: Path,
        config: IngestConfig,
        include: GitIgnoreSpec | None,
        exclude: GitIgnoreSpec | None,
        found: Found,
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
        self.page_sources: list[PageSource] = []
        # Excluding a folder excludes everything in it, unless a "!" glob could bring some back.
        self.exclude_prunes = exclude is not None and all(
            p.include for p in exclude.patterns if p.include is not None
        )

    def run(self) -> None:
        try:
            st = os.stat(self.given)
        except OSError as exc:
            self.found.skip(str(self.given), str(self.given), stat_reason(self.given, exc))
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
        stack = [Folder(self.root_real, self.root_real, "", IgnoreRules(), via_link=False)]
        behind_links: list[Folder] = []
        while stack or behind_links:
            if not stack:
                # Link targets wait until every real folder was seen, so a file gets its real path.
                stack.append(behind_links.pop())
            folder = stack.pop()
            if folder.real in self.visited:
                continue
            self.visited.add(folder.real)
            folder = self.with_ignore_files(folder)
            try:
                with os.scandir(folder.path) as scan:
                    entries = sorted(scan, key=lambda entry: entry.name, reverse=True)
            except OSError as exc:
                self.found.skip(folder.real, folder.path, f"unreadable folder: {os_reason(exc)}")
                continue
            for entry in entries:
                self._visit(folder, entry, stack, behind_links)

    def with_ignore_files(self, folder: Folder) -> Folder:
        rules = folder.rules
        for name in self.config.ignore_files:
            path = os.path.join(folder.path, name)
            try:
                lines = read_ignore_file(path)
            except OSError as exc:
                # Silently missing rules would ingest what the user asked to leave out.
                self.found.skip(path, path, f"ignore file unreadable: {os_reason(exc)}")
                continue
            if lines is not None:
                rules = rules.adding(parse_ignore_file(folder.rel, lines))
        return Folder(folder.path, folder.real, folder.rel, rules, folder.via_link)

    def _visit(
        self, folder: Folder, entry: os.DirEntry[str], stack: list[Folder], behind_links: list[Folder]
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
            stack.append(Folder(entry.path, real, rel + "/", folder.rules, folder.via_link))
            return
        if not is_link:
            self.visit_file(
                folder, entry.path, os.path.join(folder.real, entry.name), rel, None, folder.via_link
            )
            return
        try:
            target = os.stat(entry.path)
        except OSError as exc:
            # Reported whatever the name: a broken link may well have been meant as a folder.
            if self._selected(rel, folder.rules):
                self.found.skip(entry.path, entry.path, stat_reason(Path(entry.path), exc), via_link=True)
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
            behind_links.append(Folder(entry.path, real, rel + "/", folder.rules, via_link=True))
            return
        self.visit_file(folder, entry.path, real, rel, target, via_link=True)

    def visit_file(
        self, folder: Folder, path: str, real: str, rel: str, st: os.stat_result | None, via_link: bool
    ) -> None:
        name = os.path.basename(path)
        if not self._wanted_file(name, rel, folder.rules) or self._in_index(real):
            return
        reason = self._excluded_file_reason(name, rel, path)
        if reason is not None:
            self.found.exclude(real, path, reason, via_link)
            return
        page = None if self.config.include_generated else page_beside(path) or page_copied_from(real)
        if page is not None:
            self.page_sources.append(PageSource(path, real, st, via_link, page))
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
                self.found.skip(real, path, stat_reason(Path(path), exc), via_link)
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
        reason = unreadable_reason(real)
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
        if self.config.include_generated or kind_of(path) != "code" or path == Path(self.root_real):
            return False
        try:
            with os.fdopen(open_no_links(real, OPEN_FLAGS), "rb") as handle:
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
