"""A `rag search` process is short: it runs without Python's cyclic garbage collector and ends
without Python's finalization, the two costs of a process that only starts, reads and prints.

The collector: a cold search allocates mostly while it imports numpy, pyarrow, Lance and ONNX
Runtime, and the collector passed about 110-150 times over that growing heap (54-123 ms of the
process on 2 busy cores; 0.04 s of CPU less without it). What a search leaves is almost all freed by
reference counting. `run()` pauses it before the command line is parsed; the app's callback resumes
it for every other command, before that command does any work.

Finalization: tearing down what a search loaded (modules, objects, and the thread pools of numpy,
pyarrow, Lance and ONNX Runtime) took about 0.25 s of CPU after the results were printed, a fifth of
the process. A search needs none of it: the index is only read, and the files it may write (the
optimised ONNX model, the hash cache) are complete and renamed before its results are printed. So
its process ends with `os._exit` and the exit code it would have had, once stdout and stderr are
flushed; where that flush fails (a closed pipe), Python's own exit reports it as before.
"""

from __future__ import annotations

import gc
import os
import sys

# Whether the collector was on when each pause in progress began.
_paused: list[bool] = []
# Set by the command that ends its process without finalization (only `rag search`).
_exit_unfinalized: list[bool] = []


def pause_collector() -> None:
    _paused.append(gc.isenabled())
    gc.disable()


def resume_collector() -> None:
    """Ends the last pause (as it was before it); nothing when none is in progress."""
    if _paused and _paused.pop():
        gc.enable()


def exit_without_finalizing() -> None:
    """Marks this process to end by `end`, without Python's finalization."""
    _exit_unfinalized[:] = [True]


def end(done: SystemExit) -> None:
    """Ends a process marked by `exit_without_finalizing` with `done`'s code; returns otherwise, or
    where the output cannot be flushed, for Python's own exit to report."""
    code = 0 if done.code is None else done.code
    if not _exit_unfinalized or not isinstance(code, int):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)
