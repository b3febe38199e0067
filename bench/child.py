"""Runs a benchmark step as a child process: its wall time and its own peak resident memory."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# Linux starts a process's peak RSS (ru_maxrss) at the peak of the process it was forked from, and
# keeps it across exec: a step started straight from a benchmark that holds 1 GB reads at least 1 GB
# (measured: /bin/true read 1,052 MB). So the step is forked by this small launcher instead, which
# also times it, and reports both on the pipe named by its first argument.
_LAUNCHER = """
import os, sys, time
report, argv = int(sys.argv[1]), sys.argv[2:]
began = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.close(report)
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
os.write(report, f"{usage.ru_maxrss} {time.perf_counter() - began}".encode())
sys.exit(os.waitstatus_to_exitcode(status))
"""


@dataclass(frozen=True)
class ChildRun:
    wall_seconds: float
    peak_rss_mb: float
    stdout: str


def run_child(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> ChildRun:
    """Runs `argv` to completion; its wall time and peak RSS as the launcher measured them."""
    read_end, write_end = os.pipe()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        launcher = [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(write_end), *argv]
        try:
            done = subprocess.run(
                launcher,
                cwd=cwd,
                env=env,
                stdout=out,
                stderr=err,
                text=True,
                pass_fds=(write_end,),
                check=False,
            )
        finally:
            os.close(write_end)
        with os.fdopen(read_end, "rb") as report:
            measured = report.read().split()
        out.seek(0)
        err.seek(0)
        if done.returncode != 0 or len(measured) != 2:
            raise RuntimeError(f"{' '.join(argv[:6])} failed ({done.returncode}): {err.read()[-2000:]}")
        # ru_maxrss is in kilobytes on Linux.
        return ChildRun(float(measured[1]), int(measured[0]) / 1024, out.read())
