"""Named places in documents that are not paged like a PDF: slides, cells, rows, messages, chapters.

A reader numbers its places as a PDF numbers pages (core.types.PageSpan), and gives each stretch of
text a *template* that says how its place is written, kept in the anchor of the Location. A template
holds these fields, filled from the chunk's first and last place numbers:

- `{n}`: the number, or the range `7-9` when the chunk spans several places;
- `{s}`: `s` when it spans several, else nothing (`slide{s} {n}`: `slide 7`, `slides 7-9`);
- `{first}`, `{last}`: the two ends, always both (`Costs!A{first}:D{last}`: `Costs!A14:D30`).

A template without a number names one place whatever the numbers (`message "Subject"`).
"""

from __future__ import annotations

import re
import unicodedata

_FIELD = re.compile(r"(\{n\}|\{s\}|\{first\}|\{last\})")
_PATTERNS = {
    "{n}": r"(?P<n>\d+)(?:-(?P<m>\d+))?",
    "{s}": "s?",
    "{first}": r"(?P<first>\d+)",
    "{last}": r"(?P<last>\d+)",
}
_TITLE_CHARS = 60
_ANY = (0, 2**31 - 1)


def render_place(template: str, first: int, last: int) -> str:
    """The place a person reads, from a template and the chunk's first and last place numbers."""
    several = last != first
    values = {
        "{n}": f"{first}-{last}" if several else str(first),
        "{s}": "s" if several else "",
        "{first}": str(first),
        "{last}": str(last),
    }
    return "".join(values.get(part, part) for part in _FIELD.split(template))


def place_range(template: str, place: str) -> tuple[int, int] | None:
    """The numbers (first, last) that `place` cites when written by `template`, or None when it is
    not written that way; a template without numbers matches any of its places."""
    pattern = "".join(_PATTERNS.get(part) or re.escape(part) for part in _FIELD.split(template))
    match = re.fullmatch(pattern, place.strip())
    if match is None:
        return None
    found = match.groupdict()
    if found.get("n") is not None:
        first = int(found["n"])
        return first, int(found["m"] or first)
    if found.get("first") is not None:
        return int(found["first"]), int(found["last"])
    return _ANY


def place_title(text: str) -> str:
    """A title from a document (a heading, a subject line) made safe to stand in a template and a
    terminal: one line, no control or format characters, no template fields, at most 60 characters."""
    cleaned = "".join(
        " " if unicodedata.category(ch).startswith(("C", "Z")) else ch for ch in text if ch not in "{}"
    )
    title = " ".join(cleaned.replace('"', "'").split())
    return title if len(title) <= _TITLE_CHARS else title[: _TITLE_CHARS - 1] + "…"
