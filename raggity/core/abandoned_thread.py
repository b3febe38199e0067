"""Leaving a process at once when an interrupt abandoned a thread that is still inside a library."""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading

INTERRUPTED = 130  # the exit code of a process ended by Ctrl-C (128 + SIGINT)


def leave_at_exit_while_running(thread: threading.Thread) -> None:
    """When the interpreter exits while `thread` still runs, the process flushes its output and
    leaves at once with the interrupt's exit code, before the exit handlers registered earlier run
    (atexit runs the last registered first), the library's own among them. Tearing a library down
    under a thread still inside it went wrong: llama.cpp's globals freed under a running model load
    crashed the process now and then (SIGSEGV after the interrupt's message); Ray's exit handler
    shut Ray down under a running Ray Data executor, whose next call started a second Ray with
    default settings, and the process exited 1."""

    def leave() -> None:
        if thread.is_alive():
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(INTERRUPTED)

    atexit.register(leave)
