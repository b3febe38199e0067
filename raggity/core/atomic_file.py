"""Atomic file replacement: write a temporary sibling, fsync it, rename it over the target."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from raggity.core.faults import checkpoint


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Readers see the old file or the new one, never a half-written one, even after a kill."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        checkpoint("atomic:before-rename")
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def fsync_dir(folder: Path) -> None:
    """Makes a rename inside `folder` durable across power loss. Platforms that cannot open a
    directory (Windows) make renames durable without it, so that case is skipped."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except (IsADirectoryError, PermissionError):
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
