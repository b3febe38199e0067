"""Python's cyclic garbage collector, paused for a `rag search` process.

A cold `rag search` allocates mostly while it imports numpy, pyarrow, Lance and ONNX Runtime, and
the collector ran about 150 times over that growing heap (54-123 ms of the process on 2 busy cores;
0.04 s of CPU less without it). What a search leaves is almost all freed by reference counting, and
the process ends. `run()` pauses the collector before the command line is parsed; the app's callback
resumes it for every other command, before it does any work.
"""

from __future__ import annotations

import gc

# Whether the collector was on when each pause in progress began.
_paused: list[bool] = []


def pause_collector() -> None:
    _paused.append(gc.isenabled())
    gc.disable()


def resume_collector() -> None:
    """Ends the last pause (as it was before it); nothing when none is in progress."""
    if _paused and _paused.pop():
        gc.enable()
