"""Typed errors. Each carries a one-line message a user can act on, and a documented exit code."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path


def os_reason(exc: OSError) -> str:
    """The short reason of an OS error for a one-line message ("Permission denied")."""
    return exc.strerror or str(exc) or type(exc).__name__


class RaggityError(Exception):
    """Base of every error the CLI turns into one clear line and a non-zero exit code."""

    exit_code = 1

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ConfigError(RaggityError):
    """The configuration file is malformed or holds a bad key or value."""

    exit_code = 2


class ModelError(RaggityError):
    """A model is missing, unreadable, or does not match its pinned hash."""

    exit_code = 3


class IndexStateError(RaggityError):
    """The index is missing, built with other settings, or damaged."""

    exit_code = 4


class IndexBusyError(RaggityError):
    """Another process holds the ingest lock on this index."""

    exit_code = 5


class IngestIncompleteError(RaggityError):
    """Some files were skipped and the user asked for --strict."""

    exit_code = 6


class ContextOverflowError(RaggityError):
    """A question (with its prompt or conversation) longer than the model's context can hold."""


class DownloadError(RaggityError):
    """A model download failed or its checksum did not match."""

    exit_code = 7


class DatasetError(RaggityError):
    """An evaluation dataset folder is missing files or has malformed lines."""

    exit_code = 2


class IndexLocationError(RaggityError):
    """The index folder cannot be written: a file, a folder raggity did not create, or read-only media."""

    exit_code = 8


class DiskFullError(RaggityError):
    """The disk or the user's quota filled up while writing the index."""

    exit_code = 9


_DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
NOT_WRITABLE_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
# Rust libraries (LanceDB, Tantivy) raise ValueError or RuntimeError that only name the OS error.
_RUST_OS_ERROR = re.compile(r"os error (\d+)|code: (\d+), kind:")


def os_errno(exc: BaseException) -> int | None:
    """The operating-system error number behind `exc`, also when a Rust library only names it in text."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return exc.errno
    found = _RUST_OS_ERROR.search(str(exc))
    return None if found is None else int(found.group(1) or found.group(2))


def storage_error(exc: BaseException, folder: Path) -> RaggityError | None:
    """A clear error for a write under `folder` that the system refused (disk full, read-only,
    permission denied), or None for any other failure."""
    number = os_errno(exc)
    if number in _DISK_FULL:
        return DiskFullError(
            f"{folder}: no space left on device",
            "free some space, then run `rag ingest` again (the index keeps everything committed so far)",
        )
    if number in NOT_WRITABLE_ERRNOS:
        return IndexLocationError(
            f"{folder}: cannot write here ({os.strerror(number or 0).lower()})",
            "searching an index still works; to ingest, make the folder writable or set [index] path",
        )
    return None
