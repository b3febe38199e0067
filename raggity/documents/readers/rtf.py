"""Rich Text Format files (.rtf): paragraphs, headings (`\\outlinelevel`), table rows, footnotes inline.

A small tokenizer of the standard library: control words, groups and hex escapes, decoded with the
document's code page (`\\ansicpg`) and `\\uN` escapes. Destinations that are not text (fonts, colours,
styles, pictures, embedded objects, document info) are skipped. Groups are tracked on a list, not
by recursion, so a file that nests a million groups is read, not a crash. Paragraphs are numbered
as in Word files: `heading "Budget" (paragraph 14)`.
"""

from __future__ import annotations

import re

from raggity.core.places import place_title
from raggity.core.types import Document
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS, TooMuchTextError, UnreadableFileError
from raggity.documents.readers.outline import Outline

_TOKEN = re.compile(
    rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\([^a-zA-Z])|([{}])|([^\\{}\r\n]+)|[\r\n]+"
)
# Destinations whose text is not the document's (the RTF 1.9.1 specification's list, the common part).
_SKIPPED = frozenset(
    b"fonttbl colortbl stylesheet info pict object objdata themedata colorschememapping datastore"
    b" latentstyles listtable listoverridetable rsidtbl generator xmlnstbl mmathPr header footer"
    b" headerl headerr headerf footerl footerr footerf fldinst bkmkstart bkmkend filetbl revtbl"
    b" pgdsctbl shppict nonshppict blipuid userprops docvar wgrffmtfilter".split()
)
_BREAKS = {
    b"par": "\n",
    b"line": "\n",
    b"sect": "\n",
    b"page": "\n",
    b"row": "\n",
    b"cell": " | ",
    b"tab": "\t",
}
_SYMBOLS = {
    b"emdash": "—",
    b"endash": "–",
    b"lquote": "‘",
    b"rquote": "’",
    b"ldblquote": "“",
    b"rdblquote": "”",
    b"bullet": "•",
}


def rtf_document(data: bytes, source: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> Document:
    if not data.lstrip().startswith(b"{\\rtf"):
        raise UnreadableFileError("not an RTF file (no {\\rtf header)")
    paragraphs = _Tokens(max_chars).paragraphs(data)
    outline = Outline(max_chars)
    template = "paragraph{s} {n}"
    number = 0
    for raw, level in paragraphs:
        text = raw.strip().removesuffix("|").strip()
        if not text:
            continue
        number += 1
        if level is not None:
            template = f'heading "{place_title(text)}" (paragraph{{s}} {{n}})'
        outline.place(number, template)
        if level is not None:
            outline.heading(text, level)
        else:
            outline.block(text)
    return outline.document(source, "rtf")


class _Tokens:
    """The state of one pass over an RTF file's tokens."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.codepage = "cp1252"
        self.groups: list[tuple[bool, int]] = []  # per open group: (skipping, \\uc count) outside it
        self.skipping = False
        self.uc = 1
        self.pending_skip = 0
        self.star = False
        self.result: list[tuple[str, int | None]] = []
        self.parts: list[str] = []
        self.level: int | None = None
        self.total = 0
        self.hex_bytes = bytearray()
        self.footnotes: list[int] = []  # group depths of the open footnotes

    def paragraphs(self, data: bytes) -> list[tuple[str, int | None]]:
        """(text, heading level or None) of each paragraph, in order."""
        for match in _TOKEN.finditer(data):
            word, argument, hexcode, symbol, brace, text = match.groups()
            if hexcode is None:
                self._flush_hex()
            if brace is not None:
                self._brace(brace)
            elif self.skipping:
                continue
            elif self.pending_skip and (text or hexcode or symbol):
                self._fallback(text)
            elif word is not None:
                self._word(bytes(word), int(argument) if argument else None)
            elif symbol is not None:
                self._symbol(symbol)
            elif hexcode is not None:
                self.hex_bytes.append(int(hexcode, 16))
            elif text:
                self.parts.append(text.decode(self.codepage, errors="replace"))
        self._flush_hex()
        self.result.append(("".join(self.parts), self.level))
        return self.result

    def _flush_hex(self) -> None:
        if self.hex_bytes:
            self.parts.append(self.hex_bytes.decode(self.codepage, errors="replace"))
            self.hex_bytes.clear()

    def _brace(self, brace: bytes) -> None:
        if brace == b"{":
            self.groups.append((self.skipping, self.uc))
            self.star = False
            return
        if self.footnotes and self.footnotes[-1] == len(self.groups):
            self.parts.append("]")
            self.footnotes.pop()
        if self.groups:
            self.skipping, self.uc = self.groups.pop()

    def _fallback(self, text: bytes | None) -> None:
        # Characters after \\uN stand in for readers without Unicode: drop \\ucN of them.
        if not text:
            self.pending_skip -= 1
            return
        dropped = min(self.pending_skip, len(text))
        self.pending_skip -= dropped
        if text[dropped:]:
            self.parts.append(text[dropped:].decode(self.codepage, errors="replace"))

    def _word(self, name: bytes, argument: int | None) -> None:
        star, self.star = self.star, False
        if name in _SKIPPED or (star and name != b"footnote"):
            self.skipping = True
        elif name == b"footnote":
            self.parts.append(" [Footnote: ")
            self.footnotes.append(len(self.groups))
        elif name == b"ansicpg" and argument is not None:
            self.codepage = _codepage(argument)
        elif name == b"uc" and argument is not None:
            self.uc = max(0, argument)
        elif name == b"u" and argument is not None:
            code = argument % 65536
            self.parts.append(chr(code) if code < 0xD800 or code > 0xDFFF else "\ufffd")
            self.pending_skip = self.uc
        elif name == b"outlinelevel" and argument is not None:
            self.level = argument + 1 if 0 <= argument < 9 else None
        elif name == b"pard":
            self.level = None
        elif name in (b"par", b"sect", b"page"):
            self.result.append(("".join(self.parts), self.level))
            self.total += len(self.result[-1][0])
            if self.total > self.max_chars:
                raise TooMuchTextError(self.max_chars)
            self.parts = []
        elif name in _BREAKS or name in _SYMBOLS:
            self.parts.append(_BREAKS.get(name) or _SYMBOLS[name])

    def _symbol(self, symbol: bytes) -> None:
        if symbol == b"*":
            self.star = True
        elif symbol in (b"\\", b"{", b"}"):
            self.parts.append(symbol.decode())
        elif symbol == b"~":
            self.parts.append("\u00a0")
        elif symbol == b"_":
            self.parts.append("-")


def _codepage(number: int) -> str:
    try:
        b"".decode(f"cp{number}")
    except LookupError:
        return "cp1252"
    return f"cp{number}"
