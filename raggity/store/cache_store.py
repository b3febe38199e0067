"""An on-disk key -> JSON store, one file per entry, LRU-bounded: the answer and transform cache.

Keys are SHA-256 digests (see `digest`) of everything that changes the stored output.
Every file is written with atomic_write_text, so two concurrent `rag ask` processes can share a cache:
readers see a whole entry or none, and a file that vanishes (evicted by the other process) is a miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raggity.core.atomic_file import atomic_write_text

MAX_ENTRIES = 500
MAX_BYTES = 50_000_000
_SUFFIX = ".json"


def digest(*parts: object) -> str:
    """A stable key over JSON-serialisable parts (order matters)."""
    blob = json.dumps(list(parts), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class CacheStats:
    folder: str
    entries: int
    bytes: int


class CacheStore:
    """A folder of `<key>.json` files. Reading an entry touches it; writing evicts the oldest."""

    def __init__(self, folder: Path, *, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.folder = folder
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}{_SUFFIX}"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # least-recently-used eviction goes by mtime
        return data if isinstance(data, dict) else None

    def put(self, key: str, data: dict[str, Any]) -> None:
        try:
            atomic_write_text(self._path(key), json.dumps(data, ensure_ascii=False))
        except OSError:
            return  # a cache that cannot be written is only a slower cache
        self.evict()

    def _entries(self) -> list[tuple[float, int, Path]]:
        found = []
        try:
            paths = list(self.folder.glob(f"*{_SUFFIX}"))
        except OSError:
            return []
        for path in paths:
            with contextlib.suppress(OSError):
                st = path.stat()
                found.append((st.st_mtime, st.st_size, path))
        return found

    def evict(self) -> int:
        entries = sorted(self._entries(), key=lambda e: e[0])
        total = sum(size for _, size, _ in entries)
        removed = 0
        while entries and (len(entries) > self.max_entries or total > self.max_bytes):
            _, size, path = entries.pop(0)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
            total -= size
        return removed

    def stats(self) -> CacheStats:
        entries = self._entries()
        return CacheStats(str(self.folder), len(entries), sum(size for _, size, _ in entries))

    def clear(self) -> int:
        removed = 0
        for _, _, path in self._entries():
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
        return removed
