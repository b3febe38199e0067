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
import stat
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

    def _usable(self) -> bool:
        """Whether the folder is a folder of its own, not a link: writes and evictions through a
        link would land in, and delete from, whatever it points at."""
        try:
            return stat.S_ISDIR(os.lstat(self.folder).st_mode)
        except FileNotFoundError:
            return not os.path.islink(self.folder)  # created on first write (a dangling link is refused)
        except OSError:
            return False

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}{_SUFFIX}"

    def get(self, key: str) -> dict[str, Any] | None:
        if not self._usable():
            return None
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # least-recently-used eviction goes by mtime
        return data if isinstance(data, dict) else None

    def put(self, key: str, data: dict[str, Any]) -> None:
        if not self._usable():
            return  # a cache that cannot be written is only a slower cache
        try:
            atomic_write_text(self._path(key), json.dumps(data, ensure_ascii=False))
        except OSError:
            return  # a cache that cannot be written is only a slower cache
        self.evict()

    def _entries(self) -> list[tuple[float, int, Path]]:
        found = []
        if not self._usable():
            return []
        try:
            with os.scandir(self.folder) as scan:
                names = [e.name for e in scan if e.name.endswith(_SUFFIX)]
        except OSError:
            return []
        for name in names:
            path = self.folder / name
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                # Only the cache's own files: a link or a folder named *.json is not deleted through.
                if stat.S_ISREG(st.st_mode):
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
