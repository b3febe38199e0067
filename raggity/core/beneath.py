"""Open a file by a path with no symbolic link followed anywhere on it, not only at its end.

Discovery checks every file by its real path (each link resolved, each folder inside the ingested
root); a later open by that name would follow whatever stands at each folder by then, so a folder
swapped for a link between the check and the read would lead outside the root. O_NOFOLLOW guards the
last component only. Here the path is walked one folder at a time, each opened relative to the one
before it (openat) with O_NOFOLLOW | O_DIRECTORY: a link at any component fails the open with
LinkOnPathError instead of being followed, so the file opened is the one at that very path.

A real path holds no link by construction, which makes "no link anywhere" the exact check: nothing a
walk accepted can be refused here unless the tree changed in between. So the walk starts at "/"
rather than at a descriptor of the ingested root: the folders it passes are those discovery checked,
the root's own included, and a root swapped for a link after discovery is refused like any folder.
"""

from __future__ import annotations

import errno
import os
import stat

_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
# O_PATH (Linux) opens a folder one may search but not list (mode 0711, as some home folders are),
# as a plain path walk would pass through it.
_FOLDER_FLAGS: int = getattr(os, "O_PATH", os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
# Where os.open takes no dir_fd (Windows), links are checked before a plain open: racy, but no worse
# than before; raggity's supported systems all take the walk.
_WALKS = os.open in os.supports_dir_fd and bool(_NOFOLLOW)


# The reason, without the folder's name: it is shown as one line wherever the path is shown too.
ON_PATH = "a folder on its path is a symlink (not followed)"


class LinkOnPathError(OSError):
    """A folder on the path is a symbolic link now (or was swapped for something that is not a folder)."""


def open_no_links(
    path: str | os.PathLike[str], flags: int = os.O_RDONLY, *, dir_fd: int | None = None
) -> int:
    """A file descriptor of `path` opened with `flags`, no component of it followed if it is a link.

    `path` is absolute, or relative to `dir_fd` (else to the current folder); "." components are
    skipped and ".." is refused (a real path has none). Raises LinkOnPathError (errno ELOOP) when a
    folder on the path is a link, OSError with ELOOP when the file itself is one, and the usual
    OSError (ENOENT, EACCES, ...) otherwise.
    """
    name = os.fspath(path)
    parts = [part for part in name.split(os.sep) if part not in ("", ".")]
    if ".." in parts:
        raise OSError(errno.EINVAL, "'..' in a path opened without following links", name)
    if not parts:
        raise IsADirectoryError(errno.EISDIR, "not a file", name)
    if not _WALKS:
        _refuse_links_before(name)
        return os.open(name, flags | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
    start = "/" if os.path.isabs(name) else "."
    folder = os.open(start, _FOLDER_FLAGS, dir_fd=None if start == "/" else dir_fd)
    try:
        for part in parts[:-1]:
            folder, above = _folder(folder, part, name), folder
            os.close(above)
        return os.open(parts[-1], flags | _NOFOLLOW | _CLOEXEC, dir_fd=folder)
    finally:
        os.close(folder)


def _folder(folder: int, part: str, name: str) -> int:
    """The folder `part` inside `folder`, opened without following it."""
    try:
        return os.open(part, _FOLDER_FLAGS, dir_fd=folder)
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.ELOOP) and _is_link(part, folder):
            raise LinkOnPathError(errno.ELOOP, ON_PATH, name) from None
        raise


def _is_link(part: str, folder: int) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(part, dir_fd=folder).st_mode)
    except OSError:
        return False


def _refuse_links_before(name: str) -> None:
    path = os.path.abspath(name)
    parent = os.path.dirname(path)
    while parent and parent != os.path.dirname(parent):
        if os.path.islink(parent):
            raise LinkOnPathError(errno.ELOOP, ON_PATH, name)
        parent = os.path.dirname(parent)
