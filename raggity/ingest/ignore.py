"""Gitignore rules as git applies them during a walk: per folder, deepest file first, last match wins.

Patterns are compiled by pathspec's gitignore implementation. pathspec answers "is this path or
one of its parent folders matched", but a walk prunes ignored folders itself, so here a pattern
must match the path itself. Otherwise the common allow-list idiom ("*", "!*/", "!*.md") would
re-include every file through "!*/" matching its folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

# pathspec's regexes mark "matched a folder, and the path continues below it" with this group.
_DIR_GROUP = "(?P<ps_d>/)"
_DIR_GROUP_AT_END = r"(?P<ps_d>/\Z)"


def match_form(rel: str) -> str:
    """`rel` ready for matching: pathspec's regexes use "." and "$", which a newline in a name defeats."""
    return rel.replace("\n", "\x00")


@dataclass(frozen=True, slots=True)
class _Pattern:
    regex: re.Pattern[str]
    # Patterns without a folder marker (e.g. "a/**") already match only paths inside.
    folder_marker: bool
    ignore: bool
    dir_only: bool = False

    def matches(self, rel: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        if self.folder_marker:
            return self.regex.search(rel + "/" if is_dir else rel) is not None
        return self.regex.search(rel) is not None


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """The patterns of one ignore file; `base` is its folder relative to the walk root ("" or "a/b/")."""

    base: str
    patterns: tuple[_Pattern, ...]

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a "!" pattern, None: no pattern matches."""
        for pattern in reversed(self.patterns):
            if pattern.matches(rel, is_dir):
                return pattern.ignore
        return None


def parse_ignore_file(base: str, lines: Iterable[str]) -> IgnoreFile:
    """Compile gitignore lines; like git, lines that are not valid patterns are passed over."""
    patterns: list[_Pattern] = []
    for line in lines:
        pattern = line.rstrip("\r\n")
        # pathspec reads "a/**/" as the folder a itself; git means folders inside a, at any depth.
        dir_only = pattern.rstrip(" ").endswith("/**/")
        if dir_only:
            pattern = pattern.rstrip(" ")[:-1]
        try:
            compiled = GitIgnoreSpecPattern(pattern)
        except (ValueError, re.error):
            continue
        if compiled.include is None or compiled.regex is None:
            continue  # blank line or comment
        source = compiled.regex.pattern
        folder_marker = _DIR_GROUP in source
        if folder_marker:
            source = source.replace(_DIR_GROUP, _DIR_GROUP_AT_END)
        patterns.append(
            _Pattern(
                regex=re.compile(source),
                folder_marker=folder_marker,
                ignore=compiled.include,
                dir_only=dir_only,
            )
        )
    return IgnoreFile(base=match_form(base), patterns=tuple(patterns))


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """The ignore files in force in one folder of a walk, outermost first."""

    files: tuple[IgnoreFile, ...] = ()

    def adding(self, ignore_file: IgnoreFile) -> IgnoreRules:
        if not ignore_file.patterns:
            return self
        return IgnoreRules(files=(*self.files, ignore_file))

    def ignores(self, rel: str, *, is_dir: bool) -> bool:
        """Whether the path `rel` (relative to the walk root, "/"-separated) is ignored.

        Folders above `rel` are the walk's business: it does not enter ignored folders.
        """
        form = match_form(rel)
        # Patterns in deeper files override shallower ones, as in git.
        for ignore_file in reversed(self.files):
            if not form.startswith(ignore_file.base):
                continue
            decision = ignore_file.decide(form[len(ignore_file.base) :], is_dir)
            if decision is not None:
                return decision
        return False
