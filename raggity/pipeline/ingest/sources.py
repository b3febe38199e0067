"""Turns discovered files into index sources: stat now, hash and read only when needed."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from raggity.core.types import Document, Heading, TextDocument
from raggity.ingest.readers import read_file
from raggity.ingest.readers.errors import DEFAULT_MAX_CHARS
from raggity.ingest.readers.ocr_options import DEFAULT_OCR, OcrOptions
from raggity.models.hashing import sha256_file

# File systems store mtimes in ticks (2 s on FAT, a scheduler tick on ext4). A later write in the tick
# of the recorded mtime, with the same size, leaves the stamp unchanged ("racy git"); so a stamp that
# recent is recorded as unknown (0), and the next run compares hashes instead of trusting it.
RACY_NS = 2_000_000_000


@dataclass(frozen=True)
class SourceFile:
    """One thing to index: a file, or a record of an evaluation corpus.

    size and mtime_ns are a stamp taken before reading (mtime_ns 0: unknown, compare by digest);
    digest() hashes the current content, and is called before and after read() to detect a change.
    """

    source: str
    size: int
    mtime_ns: int
    digest: Callable[[], str]
    read: Callable[[], Iterator[Document]]
    # The path that read() and digest() open (a file's real path as discovery checked it): what an
    # engine reading in other processes (Ray) opens, never following a link. None: not a file.
    opened: str | None = None


def file_source(
    path: Path, *, max_chars: int = DEFAULT_MAX_CHARS, real: str | None = None, ocr: OcrOptions = DEFAULT_OCR
) -> SourceFile:
    """`path` as a source. `real`: its real path as discovery checked it, which is then what is read
    (the source keeps the name `path`), and never through a link: a file replaced by a link after
    discovery is refused instead of followed out of the folder."""
    opened = Path(real) if real is not None else path
    stat = opened.stat() if real is None else os.stat(opened, follow_symlinks=False)
    mtime_ns = stat.st_mtime_ns if stat.st_mtime_ns < time.time_ns() - RACY_NS else 0

    def read() -> Iterator[Document]:
        return read_file(opened, max_chars=max_chars, name=path, ocr=ocr)

    def digest() -> str:
        return sha256_file(opened, follow_symlinks=real is None)

    return SourceFile(str(path), stat.st_size, mtime_ns, digest, read, str(opened))


def in_roots(roots: list[Path]) -> Callable[[str], bool]:
    """Deletion is scoped to the folders being ingested: other folders' files stay indexed."""
    prefixes = [str(r) for r in roots]

    def check(source: str) -> bool:
        return any(source == p or source.startswith(p.rstrip("/") + "/") for p in prefixes)

    return check


def text_source(document: TextDocument) -> SourceFile:
    """An in-memory document as an ingest source: its title as a heading, then its text. Its content
    hash stands in for a file's stamp, so an unchanged document is not embedded again."""
    text = f"{document.title}\n\n{document.text}" if document.title else document.text
    headings = (Heading(0, 1, document.title),) if document.title else ()

    def read() -> Iterator[Document]:
        yield Document(document.name, text, "text", headings)

    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return SourceFile(document.name, len(text), 0, lambda: digest, read)
