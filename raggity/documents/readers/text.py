"""Plain text files: detect the encoding, decode in blocks, normalise newlines, stream long files in segments.

Encoding: a byte-order mark (UTF-8, UTF-16, UTF-32) wins; otherwise NUL bytes in the first 8 KiB mean
a binary file; otherwise UTF-8 if the first block decodes strictly, else cp1252, else latin-1. Bytes
that stop decoding later in the file become U+FFFD rather than failing the whole file. "\\r\\n" and a
lone "\\r" both become "\\n", so that line numbers match what editors show.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from raggity.core.types import Document, DocumentKind
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS, TooMuchTextError, UnreadableFileError
from raggity.documents.readers.source import open_source

BLOCK_BYTES = 1 << 16
BINARY_SNIFF_BYTES = 8192
_NON_BLANK = re.compile(r"\S")

# UTF-32 LE starts with the UTF-16 LE mark, so it must be tried first.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def bom_encoding(head: bytes) -> str | None:
    """The codec named by a byte-order mark at the start of `head` (the codec strips the mark)."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    return None


def sniff_encoding(head: bytes, *, at_eof: bool, declared: str | None = None) -> str:
    """The codec for a file starting with `head`; `declared` (e.g. an HTML meta charset) beats guessing.

    Raises UnreadableFileError("binary file") when there is no byte-order mark and NUL bytes appear early.
    """
    from_bom = bom_encoding(head)
    if from_bom is not None:
        return from_bom
    if b"\x00" in head[:BINARY_SNIFF_BYTES]:
        raise UnreadableFileError("binary file")
    if declared is not None:
        return declared
    try:
        # Incremental, so that a multi-byte character cut by the block end is not a failure.
        codecs.getincrementaldecoder("utf-8")("strict").decode(head, final=at_eof)
    except UnicodeDecodeError:
        pass
    else:
        return "utf-8"
    try:
        head.decode("cp1252")
    except UnicodeDecodeError:
        # cp1252 leaves five bytes undefined; latin-1 maps every byte, so it cannot fail.
        return "latin-1"
    return "cp1252"


class NewlineNormaliser:
    """Rewrites "\\r\\n" and lone "\\r" to "\\n" across piece boundaries."""

    def __init__(self) -> None:
        self._pending_cr = False

    def feed(self, piece: str) -> str:
        if self._pending_cr:
            piece = "\r" + piece
            self._pending_cr = False
        if piece.endswith("\r"):
            # The next piece may start with the "\n" of this "\r\n".
            piece = piece[:-1]
            self._pending_cr = True
        if "\r" in piece:
            piece = piece.replace("\r\n", "\n").replace("\r", "\n")
        return piece

    def finish(self) -> str:
        return "\n" if self._pending_cr else ""


def decode_blocks(blocks: Iterable[bytes], *, declared: str | None = None) -> Iterator[str]:
    """Decoded, newline-normalised text pieces of the byte blocks of one file.

    Raises UnreadableFileError for an empty or binary file.
    """
    chunks = iter(blocks)
    head = next(chunks, b"")
    if not head:
        raise UnreadableFileError("empty file")
    second = next(chunks, b"")
    encoding = sniff_encoding(head, at_eof=not second, declared=declared)
    decoder = codecs.getincrementaldecoder(encoding)("replace")
    newlines = NewlineNormaliser()
    block = head
    while block:
        piece = newlines.feed(decoder.decode(block))
        if piece:
            yield piece
        block, second = second, next(chunks, b"")
    tail = newlines.feed(decoder.decode(b"", final=True)) + newlines.finish()
    if tail:
        yield tail


def read_blocks(stream: BinaryIO, size: int = BLOCK_BYTES) -> Iterator[bytes]:
    while block := stream.read(size):
        yield block


def decode_bytes(data: bytes, *, declared: str | None = None) -> str:
    """The whole text of an in-memory file; raises UnreadableFileError for empty, binary or blank text."""
    text = "".join(decode_blocks(_split(data), declared=declared))
    require_text(text)
    return text


def read_text(path: Path, *, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """The whole decoded text of a file; for formats that need all of it at once (markdown, rst)."""
    with open_source(path) as stream:
        text = "".join(bounded(decode_blocks(read_blocks(stream)), max_chars))
    require_text(text)
    return text


def bounded(pieces: Iterable[str], max_chars: int) -> Iterator[str]:
    """`pieces` unchanged; raises TooMuchTextError as soon as together they pass `max_chars`."""
    total = 0
    for piece in pieces:
        total += len(piece)
        if total > max_chars:
            raise TooMuchTextError(max_chars)
        yield piece


def require_text(text: str) -> None:
    if not text or text.isspace():
        raise UnreadableFileError("no text")


@dataclass(frozen=True, slots=True)
class Segment:
    """Part of a file's text that ends at a line end (or the end of file), and the newlines before it."""

    text: str
    line_offset: int


def segment(pieces: Iterable[str], segment_chars: int) -> Iterator[Segment]:
    """Regroup text pieces into segments of at most `segment_chars`, each cut just after a "\\n".

    Every segment holds some non-blank text: blank lines join the text that follows them (or, at the
    end of the file, the text before). A segment is longer than `segment_chars` only when one line,
    or a run of blank lines, is. A blank file yields nothing and raises UnreadableFileError("no text").
    """
    held: Segment | None = None
    for part in _segments_with_text(pieces, segment_chars):
        if _NON_BLANK.search(part.text):
            if held is not None:
                yield held
            held = part
        elif held is not None:
            # Trailing blank lines: the only blank part is the final one.
            held = Segment(held.text + part.text, held.line_offset)
    if held is None:
        raise UnreadableFileError("no text")
    yield held


def _segments_with_text(pieces: Iterable[str], segment_chars: int) -> Iterator[Segment]:
    """Line-aligned segments, each with non-blank text, except perhaps a blank final one."""
    buffer: list[str] = []
    size = 0
    # Whether the buffer can be cut: it holds a line end after its first non-blank character.
    # Tracked per piece, so that a long line or a long blank run is not re-joined for every piece.
    has_text = False
    can_cut = False
    newlines_before = 0
    for piece in pieces:
        if not piece:
            continue
        buffer.append(piece)
        size += len(piece)
        if has_text:
            can_cut = can_cut or "\n" in piece
        else:
            found = _NON_BLANK.search(piece)
            if found is not None:
                has_text = True
                can_cut = "\n" in piece[found.start() :]
        if size < segment_chars or not can_cut:
            continue
        text = "".join(buffer)
        start = 0
        while len(text) - start >= segment_chars:
            found = _NON_BLANK.search(text, start)
            if found is None:
                break
            cut = text.rfind("\n", found.start(), start + segment_chars)
            if cut < 0:
                cut = text.find("\n", max(found.start(), start + segment_chars))
                if cut < 0:
                    break
            part = text[start : cut + 1]
            yield Segment(part, newlines_before)
            newlines_before += part.count("\n")
            start = cut + 1
        rest = text[start:]
        buffer = [rest] if rest else []
        size = len(rest)
        found = _NON_BLANK.search(rest)
        has_text = found is not None
        can_cut = found is not None and "\n" in rest[found.start() :]
    if buffer:
        yield Segment("".join(buffer), newlines_before)


def read_text_documents(
    path: Path, *, kind: DocumentKind = "text", segment_chars: int, max_chars: int = DEFAULT_MAX_CHARS
) -> Iterator[Document]:
    """One Document per segment of a plain text file, read in blocks so memory stays bounded.

    A file too long for `max_chars` raises TooMuchTextError before the first segment, so that no
    part of it is indexed; its text is counted first when its size alone cannot rule that out.
    """
    with open_source(path) as stream:
        # Every character takes at least one byte, so a file this small cannot be too long.
        if os.fstat(stream.fileno()).st_size > max_chars:
            for _ in bounded(decode_blocks(read_blocks(stream)), max_chars):
                pass
            stream.seek(0)
        for part in segment(bounded(decode_blocks(read_blocks(stream)), max_chars), segment_chars):
            yield Document(source=str(path), text=part.text, kind=kind, line_offset=part.line_offset)


def _split(data: bytes) -> Iterator[bytes]:
    for start in range(0, len(data), BLOCK_BYTES):
        yield data[start : start + BLOCK_BYTES]
