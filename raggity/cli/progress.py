"""A rich progress display for ingest: files, chunks and throughput."""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING, Self

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from raggity.api import Skipped

if TYPE_CHECKING:
    from raggity.api import GraphBuildStatus


class _LazyBar:
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


class RichIngestProgress(_LazyBar):
    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("files · {task.fields[chunks]} chunks · {task.fields[rate]} chunks/s"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self._task = self._progress.add_task("ingest", total=None, chunks=0, rate="-")
        self._chunks = 0
        self._started = time.perf_counter()
        self.skipped: list[Skipped] = []

    def planned(self, files: int) -> None:
        self._progress.start()
        self._progress.update(self._task, total=files)

    def advanced(self, files: int, chunks: int, tokens: int) -> None:
        self._chunks += chunks
        elapsed = max(time.perf_counter() - self._started, 1e-6)
        self._progress.update(
            self._task, advance=files, chunks=self._chunks, rate=f"{self._chunks / elapsed:.1f}"
        )

    def warn(self, source: str, reason: str) -> None:
        """Kept, not printed: the summary after the run gives one line per reason, not one per file."""
        self.skipped.append(Skipped(source, reason))


class RichGraphProgress(_LazyBar):
    """The entity-graph build's bar: chunks done, rate and time left. Used as a GraphProgress callback.

    The bar appears with the first status, so a build with nothing to extract prints no empty bar.
    """

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("[bold]graph"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("chunks · {task.fields[rate]} chunks/s · ETA {task.fields[eta]}"),
            TimeElapsedColumn(),
            console=console,
        )
        self._task = self._progress.add_task("graph", total=None, rate="-", eta="-")

    def __call__(self, status: GraphBuildStatus) -> None:
        self._progress.start()
        eta = status.eta_seconds
        self._progress.update(
            self._task,
            total=status.total,
            completed=status.done,
            rate=f"{status.rate:.2f}",
            eta="-" if eta is None else f"{int(eta) // 60}m{int(eta) % 60:02d}s",
        )
