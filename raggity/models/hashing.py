"""SHA-256 of model files, remembered by (path, size, mtime) so large files are hashed once."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
from pathlib import Path

from raggity.core.atomic_file import atomic_write_text
from raggity.core.beneath import open_no_links
from raggity.core.errors import ModelError

_CHUNK = 4 * 1024 * 1024


def sha256_file(path: Path, *, follow_symlinks: bool = True) -> str:
    """The SHA-256 of a regular file. Opened non-blocking, so that a FIFO (a file replaced by one
    during an ingest) is refused instead of hanging while the ingest holds its lock; OSError when
    `path` is not a regular file. `follow_symlinks` False: a real path that discovery checked, opened
    with no link followed anywhere on it (raggity.core.beneath), not only at its end, so a folder
    swapped for a link after discovery cannot lead the hash outside the ingested folder."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags) if follow_symlinks else open_no_links(path, flags)
    return sha256_fd(fd, str(path))


def sha256_fd(fd: int, name: str) -> str:
    """The SHA-256 of the regular file open at `fd` (opened non-blocking), which this closes; OSError
    naming `name` when it is not a regular file."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", name)
        os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    digest = hashlib.sha256()
    with handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


class HashCache:
    """A JSON file mapping a resolved path to the digest of the exact bytes last seen there.

    A changed size or mtime invalidates the entry, so a replaced or truncated model is hashed anew.
    """

    def __init__(self, file: Path) -> None:
        self._file = file

    def _load(self) -> dict[str, dict[str, object]]:
        try:
            data = json.loads(self._file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def digest(self, path: Path) -> str:
        info = path.stat()
        key = str(path.resolve())
        entries = self._load()
        entry = entries.get(key)
        if entry and entry.get("size") == info.st_size and entry.get("mtime_ns") == info.st_mtime_ns:
            return str(entry["sha256"])
        value = sha256_file(path)
        entries[key] = {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "sha256": value}
        # An unwritable cache only costs a re-hash next time.
        with contextlib.suppress(OSError):
            atomic_write_text(self._file, json.dumps(entries, indent=1))
        return value

    def verify(self, path: Path, expected: str, fix: str) -> None:
        actual = self.digest(path)
        if actual != expected:
            raise ModelError(
                f"{path}: SHA-256 mismatch (expected {expected[:12]}..., got {actual[:12]}...)",
                fix,
            )


def cache_home() -> Path:
    base = os.environ.get("RAGGITY_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache"), "raggity"
    )
    return Path(base)
