"""Typed errors. Each carries a one-line message a user can act on, and a documented exit code."""

from __future__ import annotations


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


class DownloadError(RaggityError):
    """A model download failed or its checksum did not match."""

    exit_code = 7


class DatasetError(RaggityError):
    """An evaluation dataset folder is missing files or has malformed lines."""

    exit_code = 2
