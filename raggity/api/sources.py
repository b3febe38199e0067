"""Turns discovered files into index sources: stat now, hash and read only when needed."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

from raggity.core.types import Document
from raggity.ingest.readers import DEFAULT_MAX_CHARS, read_file
from raggity.pipeline.ingest import SourceFile


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def file_source(path: Path, *, max_chars: int = DEFAULT_MAX_CHARS) -> SourceFile:
    stat = path.stat()

    def read() -> Iterator[Document]:
        return read_file(path, max_chars=max_chars)

    return SourceFile(str(path), stat.st_size, stat.st_mtime_ns, lambda: _file_digest(path), read)


def in_roots(roots: list[Path]) -> Callable[[str], bool]:
    """Deletion is scoped to the folders being ingested: other folders' files stay indexed."""
    prefixes = [str(r) for r in roots]

    def check(source: str) -> bool:
        return any(source == p or source.startswith(p.rstrip("/") + "/") for p in prefixes)

    return check
