"""Gitignore rules as git applies them during a walk: per folder, deepest file first, last match wins.

Patterns are compiled by pathspec's gitignore implementation. pathspec answers "is this path or
one of its parent folders matched", but a walk prunes ignored folders itself, so here a pattern
must match the path itself. Otherwise the common allow-list idiom ("*", "!*/", "!*.md") would
re-include every file through "!*/" matching its folder.

pathspec turns each "*" into a greedy "[^/]*" and each inner "**" into a greedy "(?:/.+)?", so
"a*a*a*a*a*a*a*a*a*a*b" backtracks through every way of splitting a name among its stars (minutes
for one file name), and "**/a/**/a/**/a/**/b" through every way of splitting a deep path. Here every
fixed piece between two stars, and every fixed run of segments between two "**", is taken at its
leftmost place inside an atomic group that is never re-entered. For fixed-length pieces the leftmost
place is always right (what follows can only gain from more room), so the answers are git's, found
without backtracking into earlier pieces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, AnyStr, Literal

from pathspec import GitIgnoreSpec
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

# pathspec's regexes mark "matched a folder, and the path continues below it" with this group.
_DIR_GROUP = "(?P<ps_d>/)"
_DIR_GROUP_AT_END = r"(?P<ps_d>/\Z)"


def match_form(rel: str) -> str:
    """`rel` ready for matching: pathspec's regexes use "." and "$", which a newline in a name defeats."""
    return rel.replace("\n", "\x00")


# pathspec's regex for an inner "**" (any folders, or none), and for a leading "**/".
_INNER_ANY = "(?:/.+)?"
_LEADING_ANY = "^(?:.+/)?"


class _GitBracketPattern(GitIgnoreSpecPattern):
    """pathspec's gitignore pattern, but "[!a]" never matches "/", as in git (FNM_PATHNAME)."""

    __slots__ = ()

    @staticmethod
    def _translate_segment_glob(pattern: str, range_error: Literal["literal", "raise"]) -> str:
        return "[^/]*".join(_translate_piece(piece, range_error) for piece in _split_at_stars(pattern))


class _LinearGlobPattern(_GitBracketPattern):
    """Git's pattern meaning, with "*" and "**" compiled without nested backtracking."""

    __slots__ = ()

    @staticmethod
    def _translate_segment_glob(pattern: str, range_error: Literal["literal", "raise"]) -> str:
        pieces = [_translate_piece(piece, range_error) for piece in _split_at_stars(pattern)]
        if len(pieces) == 1:
            return pieces[0]
        first, *middle, last = pieces
        return first + "".join(f"(?>[^/]*?{piece})" for piece in middle) + "[^/]*" + last

    @classmethod
    def pattern_to_regex(cls, pattern: AnyStr) -> tuple[AnyStr | None, bool | None]:
        regex, include = super().pattern_to_regex(pattern)
        if isinstance(regex, str) and _INNER_ANY in regex:
            linear: Any = _atomic_segment_runs(regex)  # a str, as `regex` was
            return linear, include
        return regex, include


def _atomic_segment_runs(regex: str) -> str:
    """Every run of segments between two "**" but the last, at its leftmost place ending a segment."""
    floating = regex.startswith(_LEADING_ANY)
    first, *middle, last = regex.removeprefix(_LEADING_ANY if floating else "^").split(_INNER_ANY)
    # "??": the leftmost place is the one with nothing skipped, when there is one. With "?", the
    # group was tried first, so "**/a/**/a" took the second "a" of "a/a/" and then failed.
    head = f"(?>(?:.+?/)??{first}(?=/))" if floating else first
    runs = "".join(f"(?>(?:/.+?)??{run}(?=/))" for run in middle)
    return f"^{head}{runs}{_INNER_ANY}{last}"


def _translate_piece(tokens: list[str], range_error: Literal["literal", "raise"]) -> str:
    """A star-free run of glob tokens as a regex: pathspec translates each token."""
    translate = GitIgnoreSpecPattern._translate_segment_glob
    regex = ""
    for token in tokens:
        negated = token.startswith(("[!", "[^")) and token.endswith("]") and len(token) > 2
        regex += ("(?!/)" if negated else "") + translate(token, range_error)
    return regex


def _split_at_stars(glob: str) -> list[list[str]]:
    """The glob's tokens (characters, escapes, brackets), cut at each run of stars outside brackets.

    Brackets are found as pathspec finds them ("[]a]" and "[!]a]" include the "]"; an unclosed "["
    is a literal), so every token translates exactly as it would have inside the whole glob.
    """
    pieces: list[list[str]] = [[]]
    i = 0
    while i < len(glob):
        char = glob[i]
        if char == "*":
            pieces.append([])
            while i < len(glob) and glob[i] == "*":
                i += 1
            continue
        end = i + 2 if char == "\\" else _bracket_end(glob, i + 1) if char == "[" else i + 1
        pieces[-1].append(glob[i:end])
        i = end
    return pieces


def _bracket_end(glob: str, i: int) -> int:
    """One past the "]" closing the bracket expression that starts at `i`, or `i` when unclosed."""
    j = i
    if j < len(glob) and glob[j] in "!^":
        j += 1
    if j < len(glob) and glob[j] == "]":
        j += 1
    while j < len(glob) and glob[j] != "]":
        j += 1
    return j + 1 if j < len(glob) else i


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


def compile_globs(lines: Iterable[str]) -> GitIgnoreSpec:
    """pathspec's GitIgnoreSpec over `lines`, with the patterns compiled as above.

    The plain "re" backend: an optional re2 or hyperscan backend would not take atomic groups.
    """
    return GitIgnoreSpec.from_lines(lines, _LinearGlobPattern, backend="simple")


def parse_ignore_file(base: str, lines: Iterable[str]) -> IgnoreFile:
    """Compile gitignore lines; like git, lines that are not valid patterns are passed over."""
    patterns = (_compile(line.rstrip("\r\n"), _LinearGlobPattern) for line in lines)
    return IgnoreFile(base=match_form(base), patterns=tuple(p for p in patterns if p is not None))


def _compile(pattern: str, kind: type[GitIgnoreSpecPattern]) -> _Pattern | None:
    """One gitignore line as a pattern, or None for a blank line, a comment or an invalid pattern."""
    # pathspec reads "a/**/" as the folder a itself; git means folders inside a, at any depth.
    dir_only = pattern.rstrip(" ").endswith("/**/")
    if dir_only:
        pattern = pattern.rstrip(" ")[:-1]
    try:
        compiled = kind(pattern)  # type: ignore[arg-type]  # pathspec's stub wants AnyStr
    except (ValueError, re.error):
        return None
    if compiled.include is None or compiled.regex is None:
        return None
    source = compiled.regex.pattern
    folder_marker = _DIR_GROUP in source
    if folder_marker:
        source = source.replace(_DIR_GROUP, _DIR_GROUP_AT_END)
    return _Pattern(
        regex=re.compile(source), folder_marker=folder_marker, ignore=compiled.include, dir_only=dir_only
    )


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
