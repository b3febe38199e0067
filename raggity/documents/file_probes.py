"""Low-level looks at one path during discovery: can it be opened, what does an ignore file say,
and the short reason a failed look gives the user."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from raggity.core.beneath import open_no_links

# Non-blocking, so that opening a FIFO cannot stall discovery.
OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read_ignore_file(path: str) -> list[str] | None:
    """The lines of an ignore file, or None when there is no such regular file."""
    try:
        fd = os.open(path, OPEN_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read().decode("utf-8", errors="replace").splitlines()
    finally:
        os.close(fd)


def unreadable_reason(real: str) -> str | None:
    """Why the file cannot be opened for reading, or None. Opening, not os.access, so ACLs count too."""
    # By its real path with no link followed on it (raggity.core.beneath), as ingest will open it.
    try:
        fd = open_no_links(real, OPEN_FLAGS)
    except OSError as exc:
        return (
            f"unreadable: {os_reason(exc)}"
            if not isinstance(exc, FileNotFoundError)
            else "vanished during discovery"
        )
    os.close(fd)
    return None


def stat_reason(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if isinstance(exc, FileNotFoundError):
        return "broken link" if os.path.islink(path) else "not found"
    return f"unreadable: {os_reason(exc)}"


def os_reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    return (exc.strerror or type(exc).__name__).lower()
