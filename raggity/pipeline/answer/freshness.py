"""Stale or absent, told apart: whether the files an answer rests on are still what was indexed, and
whether a decline may come from files the index has not seen yet.

A source is checked by its size and modification time against the manifest, and by its content hash
where those differ (a `touch` or a checkout that rewrote the same bytes is not a change). Only names
that are absolute paths are files: an in-memory document (a benchmark corpus) has nothing to compare.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from raggity.models.hashing import sha256_file
from raggity.store.manifest import Manifest, SourceEntry

# A decline looks for newer files in at most this many indexed folders (one listing each, not
# recursive): a hint costs milliseconds, never a walk of a large tree.
MAX_FOLDERS = 200
# Newer indexed files of their indexed size are hashed, up to this many bytes in all, to tell a touch
# from an edit; past it, one is counted as newer unread.
MAX_HASHED_BYTES = 32 * 1024 * 1024


def changed_since_ingest(sources: Iterable[str], manifest: Manifest) -> tuple[str, ...]:
    """The files among `sources` that were changed or deleted since they were indexed."""
    changed: list[str] = []
    for source in dict.fromkeys(sources):
        entry = manifest.sources.get(source)
        if entry is None or not os.path.isabs(source):
            continue
        try:
            info = os.lstat(source)
        except OSError:
            changed.append(source)  # deleted, or no longer readable as the indexed file
            continue
        if _differs(source, entry, info):
            changed.append(source)
    return tuple(changed)


def _differs(source: str, entry: SourceEntry, info: os.stat_result) -> bool:
    """Whether the file (`info`: its lstat) is not what was indexed: not a regular file, another size,
    or, when its stamp moved, other bytes."""
    if not stat.S_ISREG(info.st_mode) or info.st_size != entry.size:
        return True
    return info.st_mtime_ns != entry.mtime_ns and _digest(source) != entry.sha256


def _digest(source: str) -> str:
    try:
        return sha256_file(Path(source))
    except OSError:
        return ""


def newer_files(manifest: Manifest) -> int:
    """How many files in the indexed folders were written after the last ingest, among those with the
    extension of a file indexed beside them (new or edited notes, not editor leftovers). An indexed
    file written again with the same bytes (a `touch`, a checkout, a package reinstalled) is not
    counted: `rag ingest` would find nothing new in it."""
    if manifest.last_ingest is None:
        return 0
    since_ns = int(manifest.last_ingest * 1e9)
    suffixes: dict[str, set[str]] = {}
    for source in manifest.sources:
        if os.path.isabs(source):
            folder, name = os.path.split(source)
            suffixes.setdefault(folder, set()).add(os.path.splitext(name)[1])
    count = 0
    budget = MAX_HASHED_BYTES
    for folder, kinds in list(suffixes.items())[:MAX_FOLDERS]:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for item in entries:
            if item.name.startswith(".") or os.path.splitext(item.name)[1] not in kinds:
                continue
            try:
                info = item.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode) or info.st_mtime_ns <= since_ns:
                continue
            entry = manifest.sources.get(item.path)
            if entry is None or info.st_size != entry.size or info.st_size > budget:
                count += 1
                continue
            budget -= info.st_size
            if _differs(item.path, entry, info):
                count += 1
    return count
