"""Kill points: named places where a crash-safety test can make the process die.

Crash safety cannot be shown by reading code; it has to be shown by killing a real ingest at
each step of its write order and checking that the index still answers and that the next run
repairs it (as SQLite does with its test hooks). `checkpoint("name")` marks such a step. When the
environment variable RAGGITY_KILL_AT is "name" or "name:n", the n-th time (1-based, default 1)
this process reaches that checkpoint it sends itself SIGKILL: no cleanup, no finally blocks, no
flushing, exactly like a power cut or the OOM killer.

Failures that need a full disk or read-only media are injected the same way: when RAGGITY_FAIL_AT is
"name:ERRNO" (e.g. "lancedb:add:ENOSPC"), `fail_point("name")` raises OSError(ERRNO) every time it is
reached, as the system call behind it would.

The variables are read once, at import; when they are unset a checkpoint is a single comparison.
"""

from __future__ import annotations

import errno
import os
import signal

ENV = "RAGGITY_KILL_AT"
FAIL_ENV = "RAGGITY_FAIL_AT"


def _parse(value: str) -> tuple[str, int] | None:
    value = value.strip()
    if not value:
        return None
    name, sep, count = value.rpartition(":")
    if sep and count.isdigit():
        return name, max(int(count), 1)
    return value, 1


_target = _parse(os.environ.get(ENV, ""))
_reached = 0


def checkpoint(name: str) -> None:
    """Dies by SIGKILL here if RAGGITY_KILL_AT names this checkpoint and its count is reached."""
    global _reached
    if _target is None or _target[0] != name:
        return
    _reached += 1
    if _reached >= _target[1]:
        os.kill(os.getpid(), signal.SIGKILL)


def _parse_failure(value: str) -> tuple[str, int] | None:
    name, sep, code = value.strip().rpartition(":")
    number = getattr(errno, code, None)
    return (name, number) if sep and isinstance(number, int) else None


_failure = _parse_failure(os.environ.get(FAIL_ENV, ""))


def fail_point(name: str) -> None:
    """Raises OSError here if RAGGITY_FAIL_AT names this point, with the errno it names."""
    if _failure is not None and _failure[0] == name:
        raise OSError(_failure[1], os.strerror(_failure[1]), name)
