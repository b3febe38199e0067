"""Lays out the text of HTML elements as a browser's reader view would: blocks on their own lines.

Paragraphs, headings, lists, tables and `<pre>` blocks are separated by a blank line; other block
elements (list items, divs, table rows, definition terms) end a line, and a list item starts with a
bullet ("- ", or "3. " in a numbered list), as in Markdown: without one, the items of a list (a
table of contents, a list of options) read as one sentence running from line to line. Table cells
are joined with " | ", and inside a cell every break is a space, so that a row stays one line
(Sphinx wraps each cell's text in `<p>`). A row of one cell is a paragraph of its own: DocBook lists
each function as one, signature, description and example in a cell, and on lines of one paragraph
they read as one text running from row to row. Runs of whitespace collapse to one space except
inside `<pre>` outside a cell, which is kept verbatim.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field

from raggity.core.types import Anchor, Heading
from raggity.documents.readers.errors import TooMuchTextError

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
# definition one level below h6 (a list nested in a definition, one more), so that a chunk starts
# there and its citation opens at the entry.
_TERM_LEVEL = 7
# A term without an id heads its definition too when its list is a reference list: longer than a
# chunk of the default size (256 tokens, about 1,000-1,500 characters of English). git-config's one
# list of every setting is 300 KB: as one run of text its chunks begin mid-entry, under the trail
# "Variables", and the entry a question names is hard to find. A shorter list (a few options in a
# tutorial) stays with the text around it rather than making chunks of a line each.
_REFERENCE_LIST_CHARS = 2_000
_TERM_TITLE_CHARS = 80
_SPACES = re.compile(r"\s+")
# Empty link targets placed just before a heading (`<a name="x"></a><h2>`) name that heading.
_TARGETS = frozenset({"a", "span"})


@dataclass(frozen=True)
class _Element:
    """An element with an id, and the text offset where it starts."""

    name: str
    tag: str
    offset: int


@dataclass(frozen=True)
class _Holders:
    """The open elements with an id, innermost first, as a chain that a heading keeps in O(1): a
    page of 250,000 terms inside 10,000 nested elements copied 10,000 elements per term."""

    element: _Element
    outer: _Holders | None

    def __iter__(self) -> Iterator[_Element]:
        holders: _Holders | None = self
        while holders is not None:
            yield holders.element
            holders = holders.outer


@dataclass(frozen=True)
class _HeadingStart:
    """What a heading's anchor is chosen from: its own id, where the text before it ended, the
    elements with an id that hold it, and whether it is a term without an id (or the end of a
    list of terms), which belongs to its section rather than to an element around the whole page."""

    own: str | None
    after_text: int
    holders: _Holders | None
    term: str | None  # the innermost definition list entry with an id that the heading sits in
    plain_term: bool = False


@dataclass
class _TermList:
    """An open <dl>: where its text starts, the level of its terms, the number of headings before
    it, the id of its latest term (a DocBook "Tip" <h3> inside the <dd> belongs to that entry),
    whether a term with an id heads an entry, and the headings of its terms without an id, which
    stay headings only if it turns out to be a reference list."""

    start: int
    level: int
    headings_before: int
    entry: str | None = None
    anchored_terms: bool = False
    plain_terms: list[_HeadingStart] = field(default_factory=list)


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
        self._heading_starts: list[_HeadingStart] = []
        self._heading_start: _HeadingStart | None = None
        self._elements: list[_Element] = []
        self._open: list[_Element | None] = []
        self._holders: _Holders | None = None
        self._term_lists: list[_TermList] = []  # per open <dl>
        self._open_term: _HeadingStart | None = None  # the open id-less <dt>'s heading start
        self._text_end = 0
        # Per open <ul> or <ol>, the number of its last item (None: a bulleted list).
        self._lists: list[int | None] = []
        self._bullet = ""  # the open item's bullet, written before its first text

    def has_text(self) -> bool:
        return any(piece.strip() for piece in self._out)

    def result(self) -> tuple[str, tuple[Heading, ...], tuple[Anchor, ...]]:
        text = "".join(self._out).rstrip()
        anchors = _anchors(self._elements, self._headings, self._heading_starts)
        # An anchor at the very end (an empty element after the last text) points at nothing.
        return text, tuple(self._headings), tuple(a for a in anchors if a.offset < len(text))

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
        if tag in ("ul", "ol"):
            self._lists.append(0 if tag == "ol" else None)
        elif tag == "li" and not self._cell_depth:
            number = self._lists[-1] if self._lists else None
            if number is not None:
                self._lists[-1] = number = number + 1
            self._bullet = "- " if number is None else f"{number}. "
        if tag in _CELLS:
            if not self._cell_depth:
                self._row_cells += 1
            self._cell_depth += 1
        elif tag == "tr" and not self._cell_depth:
            self._row_cells = 0
        if tag == "pre":
            self._pre_depth += 1
        self._maybe_open_heading(tag, anchor)
        if tag == "dl":
            # A list inside an entry's definition (Sphinx's "Parameters" list of a function) heads
            # a level below it, so that the trail keeps the entry: "copy.replace > Parameters".
            term_level = _TERM_LEVEL + len(self._term_lists)
            self._term_lists.append(_TermList(self._length, term_level, len(self._headings)))
        elif tag == "dt" and self._term_lists:
            self._term_lists[-1].entry = anchor
        element = _Element(anchor, tag, self._length) if anchor else None
        if element is not None:
            self._elements.append(element)
        self._open.append(element)
        if element is not None:
            self._holders = _Holders(element, self._holders)

    def _maybe_open_heading(self, tag: str, anchor: str | None) -> None:
        """Opens a heading at an <h1>-<h6>, or at a definition term (see _TERM_LEVEL)."""
        if tag == "dt" and (anchor or self._term_lists):
            level = self._term_lists[-1].level if self._term_lists else _TERM_LEVEL
        elif tag in _HEADINGS:
            level = _HEADINGS[tag]
            if self._heading is not None and self._heading_tag == "dt" and not self._heading[2]:
                self._heading = None  # <dt><h3>Title</h3></dt>: the <h3> is the title
        else:
            return
        # A heading starts a line; inside a cell it is part of its row.
        if self._heading is not None or self._cell_depth:
            return
        # A heading starts its line with its title, in a list item too: its offset is where the
        # title is, and a bullet before it would sit inside the heading's text.
        self._bullet = ""
        self._heading = (self._length, level, [])
        self._heading_tag = tag
        # A term's own list holds its earlier siblings, not an entry that holds it.
        enclosing = self._term_lists[:-1] if tag == "dt" else self._term_lists
        term = _innermost_entry(enclosing)
        plain = tag == "dt" and not anchor
        self._heading_start = _HeadingStart(anchor, self._text_end, self._holders, term, plain)
        self._open_term = self._heading_start if plain else None

    def end(self, tag: str) -> None:
        if self._open and self._open.pop() is not None and self._holders is not None:
            self._holders = self._holders.outer
        if tag == "dl" and self._term_lists:
            self._end_term_list()
        elif tag in ("ul", "ol") and self._lists:
            self._lists.pop()
        elif tag == "li":
            self._bullet = ""  # an empty item: no bullet left over for the next text
        if tag == "pre":
            self._pre_depth = max(0, self._pre_depth - 1)
        if tag == self._heading_tag and self._heading is not None:
            start, level, parts = self._heading
            self._heading = None
            title = _SPACES.sub(" ", "".join(parts)).strip()
            if len(title) > _TERM_TITLE_CHARS:
                title = title[: _TERM_TITLE_CHARS - 1].rstrip() + "…"
            if title and self._heading_start is not None:
                self._headings.append(Heading(offset=start, level=level, title=title))
                self._heading_starts.append(self._heading_start)
                if tag == "dt" and self._term_lists:
                    terms = self._term_lists[-1]
                    if self._heading_start is self._open_term:
                        terms.plain_terms.append(self._heading_start)
                    else:
                        terms.anchored_terms = True
            self._open_term = None
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

    def _end_term_list(self) -> None:
        """At a </dl>: the id-less terms of a list shorter than a reference list are not headings
        after all, and the last entry of a list whose terms head their entries ends here."""
        terms = self._term_lists.pop()
        plain_kept = self._length - terms.start >= _REFERENCE_LIST_CHARS
        if terms.plain_terms and not plain_kept:
            # Only the list's own headings are looked at: a page of 40,000 short lists took 87 s
            # when each one's end filtered every heading of the page.
            first = terms.headings_before
            dropped = {id(term) for term in terms.plain_terms}
            kept = [
                k for k in range(first, len(self._headings)) if id(self._heading_starts[k]) not in dropped
            ]
            self._headings[first:] = [self._headings[k] for k in kept]
            self._heading_starts[first:] = [self._heading_starts[k] for k in kept]
        if terms.anchored_terms or (terms.plain_terms and plain_kept):
            # A heading with no title closes the last entry: the text after the list (git-merge's
            # paragraph after its list of strategies) is the section's again, not the last term's.
            term = _innermost_entry(self._term_lists)
            self._headings.append(Heading(offset=self._length, level=terms.level, title=""))
            self._heading_starts.append(_HeadingStart(None, self._text_end, self._holders, term, True))

    def _emit(self, piece: str) -> None:
        if not piece:
            return
        if self._pending_space and self._newlines_at_end == 0 and self._length and self._out[-1][-1] != " ":
            self._append(" ")
        self._pending_space = False
        if self._bullet:
            if self._newlines_at_end or not self._length:
                self._append(self._bullet)
            self._bullet = ""
        self._append(piece)

    def _append(self, piece: str) -> None:
        self._out.append(piece)
        self._length += len(piece)
        if self._length > self._max_chars:
            raise TooMuchTextError(self._max_chars)
        if piece.strip():
            self._text_end = self._length
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


def _innermost_entry(lists: list[_TermList]) -> str | None:
    """The id of the innermost definition list entry with an id among `lists` (outermost first)."""
    return next((t.entry for t in reversed(lists) if t.entry), None)


def _anchors(elements: list[_Element], headings: list[Heading], starts: list[_HeadingStart]) -> list[Anchor]:
    """Every heading's anchor at the heading, and the ids met in running text where they start.

    A heading's anchor is its own id; else the id of an element that starts right at it (no text
    between) and holds it (`<section id="x"><h2>`), or of an empty link target just before it (`<a
    name="x"></a><h2>`), the outermost of them; else the id of the definition list entry it sits in
    (DocBook's "Tip" `<h3>` inside a `<dd>` after `<dt id>`); else the innermost id that holds it (an
    anchored DocBook entry around an untagged `<h2>`), unless it is a term without an id and that
    element holds its section's heading too (asciidoc's `<div id="content">` around the whole page);
    else the anchor of the heading it sits under; else none
    (""), so that its text opens at the page rather than at an earlier, sibling section. Ids that start
    right before a heading are that heading's, and of several ids at one place the outermost wins.
    """
    offsets = [e.offset for e in elements]  # in document order, so sorted
    placed: dict[int, str] = {}
    taken: set[int] = set()
    # (level, anchor, where the text before it ended) of the headings the next one may sit under
    outline: list[tuple[int, str, int]] = []
    for heading, start in zip(headings, starts, strict=True):
        lo, hi = bisect_left(offsets, start.after_text), bisect_right(offsets, heading.offset)
        touching = elements[lo:hi]
        taken.update(id(e) for e in touching)
        # Holders start no later than what they hold: from the innermost out, those that start at
        # or after the text before the heading, then the innermost that holds text before it too.
        open_here: set[int] = set()
        holding: _Element | None = None
        for element in start.holders or ():
            if element.offset < start.after_text:
                holding = element
                break
            open_here.add(id(element))
        attached = [e for e in touching if id(e) in open_here or e.tag in _TARGETS]
        while outline and outline[-1][0] >= heading.level:
            outline.pop()
        if start.plain_term and holding is not None and outline and holding.offset <= outline[-1][2]:
            # It held its section's heading too (asciidoc's <div id="content"> holds the whole
            # page): a setting opens at its section.
            holding = None
        name = (
            start.own
            or (attached[0].name if attached else None)
            or start.term
            or (holding.name if holding else None)
            or (outline[-1][1] if outline else "")
        )
        outline.append((heading.level, name, start.after_text))
        placed[heading.offset] = name
    anchors = [Anchor(offset, name) for offset, name in placed.items()]
    seen = set(placed)
    for element in elements:
        if id(element) in taken or element.offset in seen:
            continue
        seen.add(element.offset)
        anchors.append(Anchor(element.offset, element.name))
    return sorted(anchors, key=lambda a: a.offset)
