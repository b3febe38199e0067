"""Open a file for reading, and turn operating-system failures into short UnreadableFileError reasons."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from raggity.core.beneath import LinkOnPathError, open_no_links
from raggity.core.errors import os_reason
from raggity.documents.readers.errors import UnreadableFileError

_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)


def os_error_reason(exc: OSError) -> str:
    """A short human reason for a failed open or read."""
    if isinstance(exc, FileNotFoundError):
        return "vanished during ingest"
    if isinstance(exc, PermissionError):
        return "unreadable: permission denied"
    if isinstance(exc, IsADirectoryError):
        return "not a file"
    if isinstance(exc, LinkOnPathError):
        return "a folder on its path was replaced by a symlink (not followed)"
    if exc.errno == errno.ELOOP:
        # Opened with O_NOFOLLOW: discovery checked a file, and a link now stands in its place.
        return "replaced by a symlink (not followed)"
    return f"unreadable: {os_reason(exc).lower()}"


@contextmanager
def open_source(path: Path) -> Iterator[BinaryIO]:
    """The file opened for binary reading; OSErrors inside the block become UnreadableFileError.

    Ingest opens files by the real path discovery checked, so no link may stand anywhere on `path`:
    a file, or a folder above it, replaced by a link after discovery is refused, not followed out of
    the ingested folder (raggity.core.beneath)."""
    try:
        # Non-blocking, so that a FIFO given by name fails the regular-file check instead of hanging.
        fd = open_no_links(path, os.O_RDONLY | _NONBLOCK)
    except OSError as exc:
        raise UnreadableFileError(os_error_reason(exc)) from exc
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        raise UnreadableFileError(os_error_reason(exc)) from exc
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnreadableFileError("not a file" if stat.S_ISDIR(mode) else "not a regular file")
    if _NONBLOCK:
        os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as stream:
        try:
            yield stream
        except OSError as exc:
            raise UnreadableFileError(os_error_reason(exc)) from exc
