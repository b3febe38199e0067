"""reStructuredText files: the text unchanged and its section titles.

A title is a line underlined (or over- and underlined) by one repeated punctuation character, at least
as long as the title. As in docutils, levels follow the order in which each adornment style first
appears; an overlined style differs from the same character used as underline only.
"""

from __future__ import annotations

import re
from pathlib import Path

from raggity.core.types import Document, Heading
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS
from raggity.documents.readers.text import read_text

# Every printable non-alphanumeric ASCII character may adorn a title.
_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1*[ \t]*")


def read_rst(path: Path, *, max_chars: int = DEFAULT_MAX_CHARS) -> Document:
    text = read_text(path, max_chars=max_chars)
    return Document(source=str(path), text=text, kind="rst", headings=rst_headings(text))


def rst_headings(text: str) -> tuple[Heading, ...]:
    lines = text.split("\n")
    starts: list[int] = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    styles: list[tuple[str, bool]] = []
    headings: list[Heading] = []
    index = 0
    while index < len(lines):
        found = _title_at(lines, index)
        if found is None:
            index += 1
            continue
        title, style, used = found
        if style not in styles:
            styles.append(style)
        headings.append(Heading(offset=starts[index], level=styles.index(style) + 1, title=title))
        index += used
    return tuple(headings)


def _title_at(lines: list[str], index: int) -> tuple[str, tuple[str, bool], int] | None:
    """(title, (character, overlined), lines used) when a title starts at line `index`."""
    # A title starts a block: after a blank line or straight after another title's underline.
    if index > 0 and lines[index - 1].strip() and _adornment(lines[index - 1]) is None:
        return None
    line = lines[index]
    over = _adornment(line)
    if over is not None and index + 2 < len(lines):
        title = lines[index + 1].strip()
        under = _adornment(lines[index + 2])
        if (
            title
            and under == over
            and len(lines[index + 2].rstrip()) == len(line.rstrip())
            and len(line.rstrip()) >= len(title)
            and _adornment(lines[index + 1]) is None
        ):
            return title, (over, True), 3
    if index + 1 >= len(lines) or not line.strip() or line[0] in " \t" or over is not None:
        return None
    under = _adornment(lines[index + 1])
    if under is None or len(lines[index + 1].rstrip()) < len(line.rstrip()):
        return None
    return line.strip(), (under, False), 2


def _adornment(line: str) -> str | None:
    """The adornment character when `line` is a run of one punctuation character, else None."""
    match = _ADORNMENT.fullmatch(line)
    return match.group(1) if match else None
