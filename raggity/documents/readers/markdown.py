"""Markdown files: the text unchanged (line numbers map 1:1) and its ATX and setext headings.

Headings inside fenced or indented code blocks and inside YAML front matter are not headings.
"""

from __future__ import annotations

import re
from pathlib import Path

from raggity.core.types import Document, Heading
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS
from raggity.documents.readers.text import read_text

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
# A line that cannot be the text of a setext heading: list items, quotes, tables, html, fences.
_NOT_SETEXT_TEXT = re.compile(r" {0,3}(?:[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|[>|<#]|`{3}|~{3})")
# YAML front matter closes with "---" or "..."; TOML front matter (Hugo) opens and closes with "+++".
_FRONT_MATTER_ENDS = {"---": frozenset({"---", "..."}), "+++": frozenset({"+++"})}


def read_markdown(path: Path, *, max_chars: int = DEFAULT_MAX_CHARS) -> Document:
    text = read_text(path, max_chars=max_chars)
    return Document(source=str(path), text=text, kind="markdown", headings=markdown_headings(text))


def markdown_headings(text: str) -> tuple[Heading, ...]:
    """ATX (`# Title`) and setext (`Title` over `===` or `---`) headings, in order."""
    lines = text.split("\n")
    starts = _line_starts(lines)
    headings: list[Heading] = []
    fence: str | None = None
    first = _after_front_matter(lines)
    previous_is_paragraph = False
    for index in range(first, len(lines)):
        line = lines[index]
        if fence is not None:
            closing = _FENCE.fullmatch(line)
            if (
                closing
                and closing.group(1)[0] == fence[0]
                and len(closing.group(1)) >= len(fence)
                and not closing.group(2).strip()
            ):
                fence = None
            previous_is_paragraph = False
            continue
        opening = _FENCE.fullmatch(line)
        # A backtick fence's info string may not hold backticks (CommonMark), else it is inline code.
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence = opening.group(1)
            previous_is_paragraph = False
            continue
        if _is_indented_code(line) and not previous_is_paragraph:
            continue
        atx = _ATX.fullmatch(line)
        if atx:
            title = (atx.group(2) or "").strip()
            if title:
                headings.append(Heading(offset=starts[index], level=len(atx.group(1)), title=title))
            previous_is_paragraph = False
            continue
        underline = _SETEXT.fullmatch(line)
        if underline and previous_is_paragraph:
            # CommonMark makes the whole paragraph the heading; its last line is the useful title.
            title = lines[index - 1].strip()
            level = 1 if underline.group(1)[0] == "=" else 2
            headings.append(Heading(offset=starts[index - 1], level=level, title=title))
            previous_is_paragraph = False
            continue
        previous_is_paragraph = bool(line.strip()) and not _NOT_SETEXT_TEXT.match(line)
    return tuple(headings)


def _line_starts(lines: list[str]) -> list[int]:
    starts: list[int] = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    return starts


def _after_front_matter(lines: list[str]) -> int:
    """Index of the first line after YAML front matter, or 0 when there is none."""
    ends = _FRONT_MATTER_ENDS.get(lines[0].rstrip()) if lines else None
    if ends is None:
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ends:
            return index + 1
    # Unclosed, the first line is a thematic break, not front matter.
    return 0


def _is_indented_code(line: str) -> bool:
    return line.startswith(("    ", "\t")) and bool(line.strip())
