"""Where a chunk sits in its document: its lines, pages and the nearest anchor, found by offset."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from raggity.core.types import Document, Location, PageSpan


class ChunkLocator:
    """The Location of a chunk's first..last visible characters; asked in increasing order."""

    def __init__(self, doc: Document) -> None:
        self._offset = doc.line_offset
        # Extracted HTML text has no file lines: its citations point at anchors instead.
        self._lines = None if doc.kind == "html" else _LineCounter(doc.text)
        self._pages = _PageFinder(doc.pages)
        self._anchors = sorted(doc.anchors, key=lambda anchor: anchor.offset)
        self._anchor_offsets = [anchor.offset for anchor in self._anchors]

    def __call__(self, first: int, last: int) -> Location:
        lines = self._lines
        return Location(
            line_start=0 if lines is None else self._offset + lines.line_of(first),
            line_end=0 if lines is None else self._offset + lines.line_of(last),
            page_start=self._pages.page_of(first),
            page_end=self._pages.page_of(last),
            anchor=self._anchor_at(first),
        )

    def _anchor_at(self, offset: int) -> str | None:
        """The nearest anchor that starts at or before `offset`; an empty name (a heading with no
        anchor of its own or above it) means the page itself."""
        index = bisect_right(self._anchor_offsets, offset) - 1
        return (self._anchors[index].name or None) if index >= 0 else None


class _LineCounter:
    """1-based line of a character offset; offsets must be asked for in increasing order."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._position = 0
        self._newlines = 0

    def line_of(self, offset: int) -> int:
        self._newlines += self._text.count("\n", self._position, offset)
        self._position = offset
        return self._newlines + 1


class _PageFinder:
    """Page of a character offset; characters between page spans count for the page before."""

    def __init__(self, spans: Sequence[PageSpan]) -> None:
        self._spans = sorted(spans, key=lambda span: span.start)
        self._starts = [span.start for span in self._spans]

    def page_of(self, offset: int) -> int | None:
        if not self._spans:
            return None
        index = max(0, bisect_right(self._starts, offset) - 1)
        return self._spans[index].page
