"""HTML files: the visible text, extracted with the standard library's html.parser, and h1-h6 headings.

The extracted text is what gets indexed, so chunk line numbers refer to lines of the extracted text,
not of the HTML source. Block elements end lines, paragraphs and headings are separated by a blank
line, table cells by " | ". Runs of whitespace collapse to one space except inside <pre>. Scripts,
styles, templates, <noscript> and everything in <head> but the <title> are dropped; the title, when
present, is the first line.
"""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser
from pathlib import Path

from raggity.core.types import Document, Heading
from raggity.ingest.readers.errors import UnreadableFileError
from raggity.ingest.readers.source import open_source
from raggity.ingest.readers.text import bom_encoding, decode_bytes, require_text

_HIDDEN = frozenset({"script", "style", "noscript", "template", "svg", "math", "iframe"})
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
_SPACES = re.compile(r"\s+")
# The HTML standard's prescan looks at the first 1024 bytes; some pages put long comments first.
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE)
_PRESCAN_BYTES = 4096


def read_html(path: Path) -> Document:
    with open_source(path) as stream:
        data = stream.read()
    text = decode_bytes(data, declared=declared_charset(data))
    extractor = _Extractor()
    try:
        extractor.feed(text)
        extractor.close()
    except AssertionError as exc:
        # html.parser signals a few malformed constructs (bad marked sections) with AssertionError.
        raise UnreadableFileError(f"malformed HTML: {exc}") from exc
    extracted, headings = extractor.result()
    require_text(extracted)
    return Document(source=str(path), text=extracted, kind="html", headings=headings)


def declared_charset(data: bytes) -> str | None:
    """The codec named by a <meta charset> near the top, when Python knows it and no BOM overrides it."""
    if bom_encoding(data) is not None:
        return None
    match = _META_CHARSET.search(data[:_PRESCAN_BYTES])
    if match is None:
        return None
    try:
        name = codecs.lookup(match.group(1).decode("ascii")).name
    except LookupError:
        return None
    # A meta tag readable as ASCII cannot be in UTF-16 or UTF-32, and the standard says so too.
    return "utf-8" if name.startswith(("utf-16", "utf-32")) else name


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._out: list[str] = []
        self._length = 0
        self._newlines_at_end = 0
        self._pending_space = False
        self._hidden_depth = 0
        self._in_head = False
        self._in_title = False
        self._pre_depth = 0
        self._skip_pre_newline = False
        self._heading: tuple[int, int, list[str]] | None = None
        self._headings: list[Heading] = []

    def result(self) -> tuple[str, tuple[Heading, ...]]:
        text = "".join(self._out).rstrip()
        return text, tuple(self._headings)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self._hidden_depth += 1
            return
        if tag == "head":
            self._in_head = True
        elif tag == "body":
            self._in_head = False
        elif tag == "title":
            self._in_title = True
        if tag == "br":
            self._newline()
        elif tag in _PARAGRAPHS:
            self._break(2)
        elif tag in _LINES:
            self._break(1)
        elif tag in _CELLS and self._length and self._newlines_at_end == 0:
            # Every cell but a row's first follows text on the same line.
            self._pending_space = False
            self._emit(" | ")
        if tag == "pre":
            self._pre_depth += 1
            self._skip_pre_newline = True
        level = _HEADINGS.get(tag)
        if level is not None and self._heading is None:
            self._heading = (self._length, level, [])

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # <br/>, <hr/>: a self-closed hidden element has no content to hide.
        if tag not in _HIDDEN:
            self.handle_starttag(tag, attrs)
            if tag not in ("br", "hr"):
                self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self._hidden_depth = max(0, self._hidden_depth - 1)
            return
        if tag == "head":
            self._in_head = False
        elif tag == "title":
            self._in_title = False
            self._break(1)
        elif tag == "pre":
            self._pre_depth = max(0, self._pre_depth - 1)
        if tag in _HEADINGS and self._heading is not None:
            start, level, parts = self._heading
            self._heading = None
            title = _SPACES.sub(" ", "".join(parts)).strip()
            if title:
                self._headings.append(Heading(offset=start, level=level, title=title))
        if tag in _PARAGRAPHS:
            self._break(2)
        elif tag in _LINES:
            self._break(1)

    def handle_data(self, data: str) -> None:
        if self._hidden_depth or (self._in_head and not self._in_title):
            return
        if self._heading is not None:
            self._heading[2].append(data)
        if self._pre_depth:
            if self._skip_pre_newline and data.startswith("\n"):
                # The newline right after <pre> is not content (HTML parsing rule).
                data = data[1:]
            self._skip_pre_newline = False
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

    def _emit(self, piece: str) -> None:
        if not piece:
            return
        if self._pending_space and self._newlines_at_end == 0 and self._length:
            self._append(" ")
        self._pending_space = False
        self._append(piece)

    def _append(self, piece: str) -> None:
        self._out.append(piece)
        self._length += len(piece)
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
