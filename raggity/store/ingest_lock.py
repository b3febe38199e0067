"""An exclusive per-index lock for writers; the kernel frees it when the holder dies, so it is never stale."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from raggity.core.errors import IndexBusyError


class IngestLock:
    def __init__(self, path: Path, *, wait_seconds: float = 0.0) -> None:
        self._path = path
        self._wait = wait_seconds
        self._fd: int | None = None

    def __enter__(self) -> IngestLock:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
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

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
