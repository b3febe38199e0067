"""What discovery found: the files to read and the files skipped or excluded, each with its reason.

Entries are kept by real path, so that one file reached by several paths (links inside a root) is
reported once, preferably under a path that is not a link.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class SkippedFile:
    """A file that looks like something raggity reads but will not be read, and why.

    A folder left out as a whole is listed once, its path ending in "/".
    """

    path: str
    reason: str


@dataclass(frozen=True)
class Discovery:
    files: tuple[Path, ...]
    # Could not be read (unreadable, too large, bad name...): `rag ingest --strict` fails on these.
    skipped: tuple[SkippedFile, ...]
    # Left out by a default rule the config can lift (hidden, credentials, generated).
    excluded: tuple[SkippedFile, ...] = ()
    # Each file's real path as discovery checked it: read through it (without following links), a
    # file replaced by a link after discovery is not followed out of the root.
    real_paths: dict[Path, str] = field(default_factory=dict)


@dataclass
class Found:
    """Files and skips by real path, so that one file reached twice is reported once."""

    files: dict[str, tuple[Path, bool]] = field(default_factory=dict)
    skipped: dict[str, tuple[SkippedFile, bool]] = field(default_factory=dict)
    excluded: dict[str, tuple[SkippedFile, bool]] = field(default_factory=dict)

    def add_file(self, real: str, path: Path, via_link: bool) -> None:
        if _better(path, via_link, self.files.get(real)):
            self.files[real] = (path, via_link)

    def skip(self, key: str, path: str, reason: str, via_link: bool = False) -> None:
        _keep_best(self.skipped, key, SkippedFile(path=path, reason=reason), via_link)

    def exclude(self, key: str, path: str, reason: str, via_link: bool = False) -> None:
        _keep_best(self.excluded, key, SkippedFile(path=path, reason=reason), via_link)

    def result(self) -> Discovery:
        listed = set(self.files)
        return Discovery(
            files=tuple(sorted(path for path, _ in self.files.values())),
            skipped=_unlisted(self.skipped, listed),
            excluded=_unlisted(self.excluded, listed),
            real_paths={path: real for real, (path, _) in self.files.items()},
        )


def _shown(path: str) -> str:
    """`path` with bytes that are not UTF-8 written as escapes (\\xe9), so that it can be printed
    and stored."""
    return os.fsencode(path).decode("utf-8", errors="backslashreplace")


def _keep_best(
    entries: dict[str, tuple[SkippedFile, bool]], key: str, entry: SkippedFile, via_link: bool
) -> None:
    entry = SkippedFile(_shown(entry.path), entry.reason)
    current = entries.get(key)
    if (
        current is None
        or (current[1] and not via_link)
        or (current[1] == via_link and entry.path < current[0].path)
    ):
        entries[key] = (entry, via_link)


def _unlisted(entries: dict[str, tuple[SkippedFile, bool]], listed: set[str]) -> tuple[SkippedFile, ...]:
    """A file skipped under one path but listed under another is not skipped."""
    return tuple(
        sorted((entry for key, (entry, _) in entries.items() if key not in listed), key=lambda e: e.path)
    )


def _better(path: Path, via_link: bool, current: tuple[Path, bool] | None) -> bool:
    if current is None:
        return True
    current_path, current_via_link = current
    if via_link != current_via_link:
        return current_via_link
    return str(path) < str(current_path)
