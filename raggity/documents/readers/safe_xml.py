"""XML parts of documents parsed into ElementTree elements, refusing any DTD.

Office, OpenDocument and EPUB parts never need a document type declaration; with one, a few hundred
bytes can declare entities that expand to gigabytes ("billion laughs") or name external files to
read. A DOCTYPE may only stand in the prolog, before the root element, so the prolog is scanned
first and a part that has one is refused before the parser sees it. The parse itself is the
standard library's C parser, fed in blocks, and the number of elements is bounded, so that a part
cannot build a tree far larger than its text is worth (a sheet of a million empty cells).
"""

from __future__ import annotations

import codecs
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import cast

from raggity.documents.readers.errors import UnreadableFileError

# A 100,000-row sheet of ten columns has about 1.1 million elements.
MAX_ELEMENTS = 3_000_000
_BLOCK = 1 << 20
# What may come before the root element: white space, the XML declaration, processing
# instructions and comments. Whatever follows is the root element or a DOCTYPE.
_PROLOG_ITEM = re.compile(rb"\s+|<\?.*?\?>|<!--.*?-->", re.DOTALL)
_UTF16 = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, b"<\x00", b"\x00<")


def parse_xml(data: bytes, what: str, *, max_elements: int = MAX_ELEMENTS) -> ET.Element:
    """The root element of `data`. Tags are `{namespace}local`.

    Raises UnreadableFileError naming `what` for a DTD, too many elements or malformed XML."""
    if data.startswith(_UTF16):
        # UTF-16 parts are allowed (rare); the prolog scan reads bytes as ASCII-compatible.
        data = _as_utf8(data, what)
    if _has_doctype(data):
        raise UnreadableFileError(f"{what} declares a DTD (entity expansion is refused)")
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start",))
    count = 0
    root: ET.Element | None = None
    try:
        for start in range(0, len(data), _BLOCK):
            parser.feed(data[start : start + _BLOCK])
            for _, element in cast("Iterator[tuple[str, ET.Element]]", parser.read_events()):
                root = element if root is None else root  # the first element to start is the root
                count += 1
            if count > max_elements:
                raise UnreadableFileError(f"{what} has more than {max_elements:,} XML elements")
        parser.close()
    except ET.ParseError as exc:
        raise UnreadableFileError(f"corrupt {what}: {str(exc).split(':')[0]}") from exc
    if root is None:
        raise UnreadableFileError(f"corrupt {what}: no element found")
    return root


def iter_xml(
    data: bytes, what: str, name: str, *, max_elements: int = 10 * MAX_ELEMENTS
) -> Iterator[ET.Element]:
    """Each element of `data` whose local name is `name`, complete, in document order; cleared once
    the caller moves on, so that a sheet of a million rows is never one tree in memory."""
    if data.startswith(_UTF16):
        data = _as_utf8(data, what)
    if _has_doctype(data):
        raise UnreadableFileError(f"{what} declares a DTD (entity expansion is refused)")
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
    count = 0
    try:
        for start in range(0, len(data), _BLOCK):
            parser.feed(data[start : start + _BLOCK])
            for event, element in cast("Iterator[tuple[str, ET.Element]]", parser.read_events()):
                if event == "start":
                    count += 1
                elif element.tag.rsplit("}", 1)[-1] == name:
                    yield element
                    element.clear()
            if count > max_elements:
                raise UnreadableFileError(f"{what} has more than {max_elements:,} XML elements")
        parser.close()
    except ET.ParseError as exc:
        raise UnreadableFileError(f"corrupt {what}: {str(exc).split(':')[0]}") from exc


def _has_doctype(data: bytes) -> bool:
    position = 0
    while match := _PROLOG_ITEM.match(data, position):
        position = match.end()
    return data.startswith(b"<!DOCTYPE", position) or data.startswith(b"<!doctype", position)


def _as_utf8(data: bytes, what: str) -> bytes:
    try:
        text = data.decode("utf-16")
    except UnicodeDecodeError as exc:
        raise UnreadableFileError(f"corrupt {what}: bad UTF-16") from exc
    # The declaration names UTF-16; the bytes handed on are UTF-8.
    return re.sub(r"^(\s*<\?xml[^>]*?)encoding=['\"][^'\"]*['\"]", r"\1", text, count=1).encode("utf-8")
