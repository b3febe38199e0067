"""The base of every progress bar: shown only once work starts, stopped only if it started."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:  # rich's live display loads only where a bar is made, not for every command
    from rich.progress import Progress


class LazyBar:
    """A context manager around `self._progress`, a bar that starts with the first work reported.

    An error raised before any work (a missing path, a held lock) then prints its one line without an
    empty bar above it, and only a started bar is stopped: stopping an unstarted one prints an empty
    line.
    """

    _progress: Progress

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress.live.is_started:
            self._progress.stop()
