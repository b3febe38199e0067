"""A rich progress display for ingest: files, chunks and throughput."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from raggity.api import IngestPace, Skipped
from raggity.cli.lazy_bar import LazyBar

if TYPE_CHECKING:
    from raggity.api import GraphBuildStatus


# An ingest expected to run longer than this is announced once, with its estimate, above the bar.
LONG_INGEST_SECONDS = 300


class RichIngestProgress(LazyBar):
    """The ingest bar: chunks embedded out of the chunks expected, files read, rate, and the time
    left from the work left (see IngestPace), not from the files counted."""

    def __init__(self, console: Console, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn(
                "{task.fields[chunks]} chunks · {task.fields[files]} files · {task.fields[rate]} chunks/s"
            ),
            TimeElapsedColumn(),
            TextColumn("left {task.fields[left]}"),
            console=console,
            transient=False,
        )
        self._task = self._progress.add_task("ingest", total=None, chunks="0", files="0", rate="-", left="-")
        self._pace = IngestPace(0)
        self._files = (0, 0)
        self._started = clock()
        self._announced = False
        self.skipped: list[Skipped] = []

    def planned(self, files: int, size: int) -> None:
        self._progress.start()
        self._pace = IngestPace(size)
        self._files = (0, files)
        self._show()

    def read(self, size: int, chunks: int) -> None:
        p = self._pace
        self._pace = replace(p, bytes_read=p.bytes_read + size, chunks_read=p.chunks_read + chunks)
        self._show()
        self._announce_if_long()

    def advanced(self, files: int, chunks: int, tokens: int) -> None:
        p = self._pace
        self._pace = replace(
            p, chunks_embedded=p.chunks_embedded + chunks, seconds=self._clock() - self._started
        )
        self._files = (self._files[0] + files, self._files[1])
        self._show()
        self._announce_if_long()

    def _announce_if_long(self) -> None:
        """Once, and only from an estimate that counts every chunk embedded so far: a batch is
        embedded while its last file is still being read, so this usually happens at that file's
        end, not at the batch."""
        left = self._pace.seconds_left
        if not self._announced and self._pace.grounded and left is not None and left > LONG_INGEST_SECONDS:
            self._announced = True
            self._progress.console.print(
                f"this ingest will take about {_duration(left)} more "
                f"(~{self._pace.chunks_expected:,} chunks at {self._pace.chunks_per_second:.1f} chunks/s); "
                "Ctrl-C stops it safely and the next ingest continues",
                markup=False,
            )

    def _show(self) -> None:
        p = self._pace
        expected = p.chunks_expected
        left = p.seconds_left
        self._progress.update(
            self._task,
            total=expected,
            completed=p.chunks_embedded,
            chunks=f"{p.chunks_embedded}/{'?' if expected is None else f'~{expected}'}",
            files=f"{self._files[0]}/{self._files[1]}",
            rate="-" if p.chunks_per_second is None else f"{p.chunks_per_second:.1f}",
            left="-" if left is None else _duration(left),
        )

    def warn(self, source: str, reason: str) -> None:
        """Kept, not printed: the summary after the run gives one line per reason, not one per file."""
        self.skipped.append(Skipped(source, reason))


class RichGraphProgress(LazyBar):
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


def _duration(seconds: float) -> str:
    minutes = int(seconds) // 60
    if minutes >= 60:
        return f"{minutes // 60}h{minutes % 60:02d}m"
    return f"{minutes}m{int(seconds) % 60:02d}s"
