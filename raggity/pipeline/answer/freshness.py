"""Stale or absent, told apart: whether the files an answer rests on are still what was indexed, and
whether a decline may come from files the index has not seen yet.

A source is checked by its size and modification time against the manifest, and by its content hash
where those differ (a `touch` or a checkout that rewrote the same bytes is not a change). Only names
that are absolute paths are files: an in-memory document (a benchmark corpus) has nothing to compare;
an index that names files relative to a root ([index] root) is checked against the files under this
checkout's `root`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from raggity.core.beneath import open_no_links
from raggity.models.hashing import sha256_fd
from raggity.store.manifest import Manifest, SourceEntry

# A decline looks for newer files in at most this many indexed folders (one listing each, not
# recursive): a hint costs milliseconds, never a walk of a large tree.
MAX_FOLDERS = 200
# Newer indexed files of their indexed size are hashed, up to this many bytes in all, to tell a touch
# from an edit; past it, one is counted as newer unread.
MAX_HASHED_BYTES = 32 * 1024 * 1024
# Non-blocking: a FIFO put in a file's place must not stall an answer.
_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)


def _file(source: str, root: str | None) -> str | None:
    """The file a recorded name stands for here, or None for a name that is not a file."""
    if os.path.isabs(source):
        return source
    return os.path.join(root, source) if root is not None else None


def changed_since_ingest(
    sources: Iterable[str], manifest: Manifest, root: str | None = None
) -> tuple[str, ...]:
    """The files among `sources` that were changed or deleted since they were indexed."""
    changed: list[str] = []
    for source in dict.fromkeys(sources):
        entry = manifest.sources.get(source)
        path = _file(source, root)
        if entry is not None and path is not None and _differs(path, entry):
            changed.append(source)
    return tuple(changed)


def _differs(path: str, entry: SourceEntry, folder: int | None = None) -> bool:
    """Whether the file at `path` (relative to the open `folder`, if given) is not what was indexed:
    gone, unreadable, not a regular file, another size, or, when its stamp moved, other bytes. It is
    opened with no link followed anywhere on its path (raggity.core.beneath): a folder swapped for a
    link since the ingest leads nowhere, and a file indexed under a link's name is never read
    through it, so it counts as changed (`rag ingest` settles it)."""
    try:
        fd = open_no_links(path, _READ, dir_fd=folder)
    except OSError:
        return True
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != entry.size:
            return True
        return info.st_mtime_ns != entry.mtime_ns and sha256_fd(os.dup(fd), path) != entry.sha256
    except OSError:
        return True
    finally:
        os.close(fd)


def newer_files(manifest: Manifest, root: str | None = None) -> int:
    """How many files in the indexed folders were written after the last ingest, among those with the
    extension of a file indexed beside them (new or edited notes, not editor leftovers). An indexed
    file written again with the same bytes (a `touch`, a checkout, a package reinstalled) is not
    counted: `rag ingest` would find nothing new in it. A folder is listed, and its files opened,
    with no link followed on its path."""
    if manifest.last_ingest is None:
        return 0
    since_ns = int(manifest.last_ingest * 1e9)
    suffixes: dict[str, set[str]] = {}
    named: dict[str, str] = {}  # each file here, by the name the index records it under
    for source in manifest.sources:
        path = _file(source, root)
        if path is not None:
            named[path] = source
            folder, name = os.path.split(path)
            suffixes.setdefault(folder, set()).add(os.path.splitext(name)[1])
    count = 0
    budget = MAX_HASHED_BYTES
    for folder, kinds in list(suffixes.items())[:MAX_FOLDERS]:
        try:
            listing = open_no_links(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            continue
        try:
            names = os.listdir(listing)
            for name in names:
                if name.startswith(".") or os.path.splitext(name)[1] not in kinds:
                    continue
                try:
                    info = os.stat(name, dir_fd=listing, follow_symlinks=False)
                except OSError:
                    continue
                if not stat.S_ISREG(info.st_mode) or info.st_mtime_ns <= since_ns:
                    continue
                entry = manifest.sources.get(named.get(os.path.join(folder, name), ""))
                if entry is None or info.st_size != entry.size or info.st_size > budget:
                    count += 1
                    continue
                budget -= info.st_size
                if _differs(name, entry, listing):
                    count += 1
        except OSError:
            continue
        finally:
            os.close(listing)
    return count
