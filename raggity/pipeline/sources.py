"""Turns discovered files into index sources: stat now, hash and read only when needed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from raggity.core.types import Document
from raggity.ingest.readers import read_file
from raggity.models.hashing import sha256_file
from raggity.pipeline.ingest import SourceFile


def file_source(path: Path) -> SourceFile:
    stat = path.stat()

    def read() -> Iterator[Document]:
        return read_file(path)

    return SourceFile(str(path), stat.st_size, stat.st_mtime_ns, lambda: sha256_file(path), read)


def in_roots(roots: list[Path]) -> Callable[[str], bool]:
    """Deletion is scoped to the folders being ingested: other folders' files stay indexed."""
    prefixes = [str(r) for r in roots]

    def check(source: str) -> bool:
        return any(source == p or source.startswith(p.rstrip("/") + "/") for p in prefixes)

    return check
