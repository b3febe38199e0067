"""Runs a benchmark step as a child process: its wall time and its own peak resident memory."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ChildRun:
    wall_seconds: float
    peak_rss_mb: float
    stdout: str


def run_child(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> ChildRun:
    """Runs `argv` to completion. Peak RSS is this child's own, from wait4: RUSAGE_CHILDREN would
    report the largest of every child so far."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        began = time.perf_counter()
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - began
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait again
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:6])} failed ({child.returncode}): {err.read()[-2000:]}")
        # ru_maxrss is in kilobytes on Linux.
        return ChildRun(wall, usage.ru_maxrss / 1024, out.read())
