"""The text of a structured document built block by block, with its headings and its numbered places.

Every block belongs to the place opened last (`place`): a slide, a sheet's row, a notebook cell, a
message. Places become PageSpans that together cover the whole text, so the chunker's page lookup
gives each chunk its first and last place; the place's template (core/places.py) becomes an Anchor
wherever it changes, so the chunk's location says how the place is written.
"""

from __future__ import annotations

from raggity.core.types import Anchor, Document, DocumentKind, Heading, PageSpan
from raggity.documents.readers.errors import TooMuchTextError
from raggity.documents.readers.text import require_text

BLOCK_SEPARATOR = "\n\n"


class Outline:
    """Blocks of text separated by a blank line, bounded by `max_chars` (TooMuchTextError)."""

    def __init__(self, max_chars: int) -> None:
        self._max_chars = max_chars
        self._parts: list[str] = []
        self._length = 0
        self._headings: list[Heading] = []
        self._spans: list[PageSpan] = []
        self._anchors: list[Anchor] = []
        self._place: tuple[int, int] | None = None  # (number, start offset) of the open place
        self._template: str | None = None

    @property
    def length(self) -> int:
        return self._length

    def place(self, number: int, template: str) -> None:
        """Blocks from here on belong to place `number`, written as `template` says."""
        self._close_place()
        self._place = (number, self._length)
        if template != self._template:
            self._anchors.append(Anchor(self._length, template))
            self._template = template

    def picture(self, text: str, mark: str) -> None:
        """Text read by OCR from a picture of the open place: the same place with its template marked
        (`slide 7 (image, OCR)`), so that a citation says the words came from an image."""
        if self._place is None or self._template is None or not text.strip():
            return
        number, template = self._place[0], self._template
        self.place(number, template + mark)
        self.block(text)
        self.place(number, template)  # what follows in this place is its own text again

    def heading(self, title: str, level: int) -> None:
        """A heading of `level` (1 = the top) on a block of its own; a blank title is no heading."""
        title = " ".join(title.split())
        if title:
            self._separate()
            self._headings.append(Heading(offset=self._length, level=level, title=title))
            self._add(title)

    def block(self, text: str) -> None:
        """A paragraph, a table row, a cell: surrounding blank lines are dropped, inner ones kept."""
        text = text.strip("\n").rstrip()
        if not text.strip():
            return
        self._separate()
        self._add(text)

    def section(self, text: str, headings: tuple[Heading, ...]) -> None:
        """A block laid out elsewhere (an e-book's chapter) with its headings, offsets into `text`."""
        lead = len(text) - len(text.lstrip("\n"))
        text = text[lead:].rstrip()
        if not text.strip():
            return
        self._separate()
        start = self._length - lead  # the headings' offsets count the dropped leading newlines
        self._add(text)
        self._headings.extend(
            Heading(offset=start + h.offset, level=h.level, title=h.title)
            for h in headings
            if h.offset < len(text)
        )

    def line(self, text: str) -> None:
        """A line that runs on from the one before (a table's next row), not a paragraph of its own."""
        text = " ".join(text.split())
        if text:
            if self._parts:
                self._add("\n")
            self._add(text)

    def _separate(self) -> None:
        if self._parts:
            self._add(BLOCK_SEPARATOR)

    def document(self, source: str, kind: DocumentKind) -> Document:
        """The Document built so far; raises UnreadableFileError("no text") when it has none."""
        self._close_place()
        text = "".join(self._parts)
        require_text(text)
        return Document(
            source=source,
            text=text,
            kind=kind,
            headings=tuple(self._headings),
            pages=tuple(self._spans),
            anchors=tuple(self._anchors),
        )

    def _add(self, piece: str) -> None:
        self._length += len(piece)
        if self._length > self._max_chars:
            raise TooMuchTextError(self._max_chars)
        self._parts.append(piece)

    def _close_place(self) -> None:
        if self._place is not None:
            number, start = self._place
            if self._length > start or not self._spans:
                self._spans.append(PageSpan(start=start, end=self._length, page=number))
            self._place = None
