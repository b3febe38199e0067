"""An exclusive per-index lock for writers; the kernel frees it when the holder dies, so it is never stale."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from raggity.core.errors import IndexBusyError, IndexLocationError, storage_error
from raggity.store.layout import IndexLayout
from raggity.store.ownership import claim_index_folder


class IngestLock:
    """Held by every writer of an index. Taking it first claims the lock file's folder as an index
    folder (see raggity.store.ownership), so nothing is created in a folder that is not raggity's."""

    def __init__(self, path: Path, *, wait_seconds: float = 0.0) -> None:
        self._path = path
        self._wait = wait_seconds
        self._fd: int | None = None

    def __enter__(self) -> IngestLock:
        claim_index_folder(IndexLayout(self._path.parent))
        fd = self._open()
        deadline = time.monotonic() + self._wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
                    os.close(fd)
                    raise IndexBusyError(
                        f"{self._path.parent}: another ingest is running (pid {holder})",
                        "wait for it to finish, or pass --wait SECONDS",
                    ) from None
                time.sleep(0.2)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd
        return self

    def _open(self) -> int:
        try:
            return os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise storage_error(exc, self._path.parent) or IndexLocationError(
                f"{self._path}: cannot create the ingest lock ({exc.strerror or exc})",
                "check that the index folder is writable",
            ) from exc

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def running_writer(path: Path) -> int | None:
    """The pid of a live process holding the lock at `path`, or None. Read-only: never takes the lock,
    so it cannot make a starting ingest fail as busy. A killed holder's pid is left in the file, hence
    the liveness check."""
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    if not text.isdigit():
        return None
    pid = int(text)
    return pid if process_alive(pid) else None


def process_alive(pid: int) -> bool:
    """Whether a process with this pid runs on this machine (one owned by another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True
