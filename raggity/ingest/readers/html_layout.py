"""Lays out the text of HTML elements as a browser's reader view would: blocks on their own lines.

Paragraphs, headings, lists, tables and `<pre>` blocks are separated by a blank line; other block
elements (list items, divs, table rows, definition terms) end a line; table cells are joined with
" | ", and inside a cell every break is a space, so that a row stays one line (Sphinx wraps each
cell's text in `<p>`). A row of one cell is a paragraph of its own: DocBook lists each function as
one, signature, description and example in a cell, and on lines of one paragraph they read as one
text running from row to row. Runs of whitespace collapse to one space except inside `<pre>` outside a cell,
which is kept verbatim.
"""

from __future__ import annotations

import re

from raggity.core.types import Anchor, Heading
from raggity.ingest.readers.errors import TooMuchTextError

_PARAGRAPHS = frozenset(
    {"p", "pre", "blockquote", "table", "ul", "ol", "dl", "figure", "h1", "h2", "h3", "h4", "h5", "h6"}
)
_LINES = frozenset(
    {
        "address", "article", "aside", "body", "caption", "dd", "details", "dialog", "div", "dt",
        "fieldset", "figcaption", "footer", "form", "header", "hgroup", "hr", "li", "main", "nav",
        "option", "section", "summary", "tbody", "tfoot", "thead", "tr", "title",
    }
)  # fmt: skip
_CELLS = frozenset({"td", "th"})
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
# A definition term with an id (a Sphinx or DocBook API entry: <dt id="copy.deepcopy">) heads its
# definition one level below h6, so that a chunk starts there and its citation opens at the entry.
_TERM_LEVEL = 7
_TERM_TITLE_CHARS = 80
_SPACES = re.compile(r"\s+")


class TextLayout:
    """Receives start tags, end tags and text in document order; builds the text, headings, anchors.

    Raises TooMuchTextError as soon as the text grows past `max_chars`.
    """

    def __init__(self, max_chars: int) -> None:
        self._max_chars = max_chars
        self._out: list[str] = []
        self._length = 0
        self._newlines_at_end = 0
        self._pending_space = False
        self._pre_depth = 0
        self._cell_depth = 0
        self._row_cells = 0
        self._heading: tuple[int, int, list[str]] | None = None
        self._heading_tag = ""
        self._headings: list[Heading] = []
        self._anchors: list[Anchor] = []
        self._last_anchor_titled = False

    def result(self) -> tuple[str, tuple[Heading, ...], tuple[Anchor, ...]]:
        text = "".join(self._out).rstrip()
        # An anchor at the very end (an empty element after the last text) points at nothing.
        anchors = tuple(anchor for anchor in self._anchors if anchor.offset < len(text))
        return text, tuple(self._headings), anchors

    def start(self, tag: str, *, anchor: str | None = None) -> None:
        if self._cell_depth and (tag == "br" or tag in _PARAGRAPHS or tag in _LINES):
            self._pending_space = True  # a row is one line: its cells' blocks are runs of words
        elif tag == "br":
            self._newline()
        elif tag in _PARAGRAPHS:
            self._break(2)
        elif tag in _LINES:
            self._break(1)
        elif tag in _CELLS and self._length and self._newlines_at_end == 0:
            # Every cell but a row's first follows text on the same line.
            self._pending_space = False
            self._emit(" | ")
        if tag in _CELLS:
            if not self._cell_depth:
                self._row_cells += 1
            self._cell_depth += 1
        elif tag == "tr" and not self._cell_depth:
            self._row_cells = 0
        if tag == "pre":
            self._pre_depth += 1
        level = _TERM_LEVEL if tag == "dt" and anchor else _HEADINGS.get(tag)
        # A heading starts a line; inside a cell it is part of its row.
        if level is not None and self._heading is None and not self._cell_depth:
            self._heading = (self._length, level, [])
            self._heading_tag = tag
        if anchor:
            self._add_anchor(anchor, titled=level is not None)

    def end(self, tag: str) -> None:
        if tag == "pre":
            self._pre_depth = max(0, self._pre_depth - 1)
        if tag == self._heading_tag and self._heading is not None:
            start, level, parts = self._heading
            self._heading = None
            title = _SPACES.sub(" ", "".join(parts)).strip()
            if len(title) > _TERM_TITLE_CHARS:
                title = title[: _TERM_TITLE_CHARS - 1].rstrip() + "…"
            if title:
                self._headings.append(Heading(offset=start, level=level, title=title))
        if tag in _CELLS:
            self._cell_depth = max(0, self._cell_depth - 1)
        elif self._cell_depth and (tag in _PARAGRAPHS or tag in _LINES):
            self._pending_space = True
        elif tag in _PARAGRAPHS or (tag == "tr" and self._row_cells == 1):  # a one-cell row: a paragraph
            self._break(2)
        elif tag in _LINES:
            self._break(1)

    def data(self, data: str) -> None:
        if self._heading is not None:
            self._heading[2].append(data)
        if self._pre_depth and not self._cell_depth:
            self._emit(data)
            return
        collapsed = _SPACES.sub(" ", data)
        if not collapsed:
            return
        if collapsed[0] == " ":
            self._pending_space = True
            collapsed = collapsed[1:]
        trailing_space = collapsed.endswith(" ")
        collapsed = collapsed.rstrip(" ")
        if collapsed:
            self._emit(collapsed)
        self._pending_space = self._pending_space or trailing_space

    def _add_anchor(self, name: str, *, titled: bool) -> None:
        """Of several anchors at one place, a heading's own id wins, else the outermost element's:
        `<div id="content"><h2 id="_synopsis">` cites `#_synopsis`, and `<section id="module-copy">
        <span id="index-0">` cites the section rather than the index target inside it."""
        if self._anchors and self._anchors[-1].offset == self._length:
            if titled and not self._last_anchor_titled:
                self._anchors[-1] = Anchor(self._length, name)
                self._last_anchor_titled = True
            return
        self._anchors.append(Anchor(self._length, name))
        self._last_anchor_titled = titled

    def _emit(self, piece: str) -> None:
        if not piece:
            return
        if self._pending_space and self._newlines_at_end == 0 and self._length and self._out[-1][-1] != " ":
            self._append(" ")
        self._pending_space = False
        self._append(piece)

    def _append(self, piece: str) -> None:
        self._out.append(piece)
        self._length += len(piece)
        if self._length > self._max_chars:
            raise TooMuchTextError(self._max_chars)
        stripped = piece.rstrip("\n")
        if stripped:
            self._newlines_at_end = len(piece) - len(stripped)
        else:
            self._newlines_at_end += len(piece)

    def _break(self, newlines: int) -> None:
        """End the current line, leaving `newlines` line ends (2: a blank line) unless at the start."""
        self._pending_space = False
        if self._length and self._newlines_at_end < newlines:
            self._append("\n" * (newlines - self._newlines_at_end))
        self._move_open_heading()

    def _newline(self) -> None:
        """A line break that always counts: two <br> in a row leave a blank line."""
        self._pending_space = False
        if self._length:
            self._append("\n")
        self._move_open_heading()

    def _move_open_heading(self) -> None:
        # A heading opened before a break (e.g. <h2><div>..) starts after it.
        if self._heading is not None and not self._heading[2]:
            self._heading = (self._length, self._heading[1], self._heading[2])
