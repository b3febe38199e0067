"""Turns discovered files into index sources: stat now, hash and read only when needed."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from raggity.core.types import Document, Heading, TextDocument
from raggity.documents.readers import read_file
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS
from raggity.documents.readers.ocr_options import DEFAULT_OCR, OcrOptions
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
    path: Path,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    real: str | None = None,
    ocr: OcrOptions = DEFAULT_OCR,
    name: str | None = None,
) -> SourceFile:
    """`path` as a source named `name` (default: `path`; see SourceNames). `real`: its real path as
    discovery checked it, which is then what is read, and never through a link: a file replaced by a
    link after discovery is refused instead of followed out of the folder."""
    opened = Path(real) if real is not None else path
    name = name if name is not None else str(path)
    stat = opened.stat() if real is None else os.stat(opened, follow_symlinks=False)
    mtime_ns = stat.st_mtime_ns if stat.st_mtime_ns < time.time_ns() - RACY_NS else 0

    def read() -> Iterator[Document]:
        return read_file(opened, max_chars=max_chars, name=Path(name), ocr=ocr)

    def digest() -> str:
        return sha256_file(opened, follow_symlinks=real is None)

    return SourceFile(name, stat.st_size, mtime_ns, digest, read, str(opened))


@dataclass(frozen=True)
class SourceNames:
    """How an index names its files: relative to `root` ([index] root, by default the config file's
    folder) when inside it, so that a shared index's names are the same on every checkout; absolute
    otherwise, or everywhere when `root` is None. An index that already names files under `root` by
    their absolute paths (written before names were relative) keeps doing so until a rebuild, so
    that an incremental ingest does not read every file again under a new name."""

    root: Path | None = None

    @classmethod
    def of(cls, root: Path | None, recorded: Iterable[str], *, rebuild: bool) -> SourceNames:
        if root is None or rebuild:
            return cls(root)
        legacy = any(os.path.isabs(s) and Path(s).is_relative_to(root) for s in recorded)
        return cls(None if legacy else root)

    def name(self, path: Path) -> str:
        if self.root is not None and path.is_relative_to(self.root) and path != self.root:
            return path.relative_to(self.root).as_posix()
        return str(path)

    def path(self, name: str) -> Path:
        """The file a recorded name stands for on this machine."""
        return Path(name) if self.root is None or os.path.isabs(name) else self.root / name


def in_roots(roots: list[Path], names: SourceNames | None = None) -> Callable[[str], bool]:
    """Deletion is scoped to the folders being ingested: other folders' files stay indexed. A
    recorded name is compared as the file it stands for (`names`: how the index names files)."""
    prefixes = [str(r) for r in roots]
    where = (names or SourceNames()).path

    def check(source: str) -> bool:
        path = str(where(source))
        return any(path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)

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
