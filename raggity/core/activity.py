"""What a slow reading step is doing now (OCR on page 4 of scan.pdf), and the parts it could not read,
told to whoever listens (the ingest bar).

Readers run deep under the pipeline and cannot see the display; a context variable carries the
listener down to them without threading a callback through every engine's signature. Nobody
listening (a library caller, a test) costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Activity:
    """`source` is at `doing` ("OCR page 4/12"); with `problem`, that part could not be read (the
    file itself may still be indexed from its other parts)."""

    source: str
    doing: str
    problem: str = ""


class ActivityListener(Protocol):
    def __call__(self, activity: Activity) -> None: ...


_LISTENER: ContextVar[ActivityListener | None] = ContextVar("raggity_activity", default=None)


def report(activity: Activity) -> None:
    """Tell the listener, if any."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(activity)


@contextmanager
def listening(listener: ActivityListener) -> Iterator[None]:
    """`listener` hears every report made in this context (this thread) until the block ends."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)
