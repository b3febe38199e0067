"""A rich progress display for ingest: files, chunks and throughput."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import replace
from typing import TYPE_CHECKING, Self

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn
from rich.table import Column
from rich.text import Text

from raggity.api import IngestPace, Skipped, listening
from raggity.cli.lazy_bar import LazyBar
from raggity.cli.visible import visible

if TYPE_CHECKING:
    from types import TracebackType

    from raggity.api import Activity, GraphBuildStatus


# An ingest expected to run longer than this is announced once, with its estimate, above the bar.
LONG_INGEST_SECONDS = 300
# ...once this share of the bytes planned has been read: files come in name order, and the first
# few are no sample of the rest. Replayed over three manuals (`python -m bench.ingest_estimate`),
# the chunks expected with 10% of the bytes read were 33% too many on PostgreSQL's (its first pages,
# the client commands, have long option lists, an entry a chunk), with 20% within 3% there and 12%
# on git-doc and Django's; the announcement had come after the first few files and promised "about
# 6m42s more (~19,740 chunks)" for 11,867.
ANNOUNCE_AFTER_READ = 0.2
# The bar takes the width the text leaves, no more than this: with five-digit chunk counts and
# four-digit file counts, the whole line fits an 80-column terminal.
BAR_WIDTH = 30
# A file named on the bar while a slow reader (OCR) works on it is cut to this many characters.
NAME_WIDTH = 32


def _whole() -> Column:
    """A text column that never wraps: the bar gives way instead."""
    return Column(no_wrap=True)


def clock_text(seconds: float) -> str:
    """A duration as the bars show it, elapsed and left alike: 0:27, 12:05, 1:02:03."""
    whole = max(int(seconds), 0)
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class _Times(ProgressColumn):
    """ "0:27 elapsed, 3:10 left": both in one format; the time left is a task field ("-": unknown)."""

    def render(self, task: Task) -> Text:
        return Text(f"{clock_text(task.elapsed or 0.0)} elapsed, {task.fields.get('left', '-')} left")


class RichIngestProgress(LazyBar):
    """The ingest bar: chunks embedded out of the chunks expected, files read, rate, and the time
    left from the work left (see IngestPace), not from the files counted."""

    def __init__(self, console: Console, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=None, table_column=Column(max_width=BAR_WIDTH)),
            TextColumn("{task.fields[chunks]} chunks · {task.fields[files]} files ·", table_column=_whole()),
            _Times(table_column=_whole()),
            console=console,
            expand=True,
            transient=False,
            get_time=clock,
        )
        self._task = self._progress.add_task("ingest", total=None, chunks="0", files="0", left="-")
        self._pace = IngestPace()
        self._files = (0, 0)
        self._started = clock()
        self._announced = False
        self.skipped: list[Skipped] = []
        self._listening = ExitStack()

    def __enter__(self) -> Self:
        # Slow readers (OCR) say which file and page they are on while this bar is shown.
        self._listening.enter_context(listening(self.heard))
        return super().__enter__()

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._listening.close()
        super().__exit__(t, e, tb)

    def heard(self, activity: Activity) -> None:
        """The bar names the file and what is done to it ("ingest scan.pdf: OCR page 4 (1/12)"); a part
        that could not be read is printed above the bar as one line, naming the file and the page.
        Names are data: control characters shown as escapes, and no rich markup."""
        name = visible(activity.source.rsplit("/", 1)[-1])
        name = name if len(name) <= NAME_WIDTH else name[: NAME_WIDTH - 1] + "…"
        if activity.problem:
            self._progress.console.print(
                Text(f"{visible(activity.source)}: {visible(activity.problem)}", style="yellow")
            )
            return
        self._progress.update(self._task, description=f"ingest {escape(name)}: {escape(activity.doing)}")

    def planned(self, files: int, sizes: Mapping[str, int]) -> None:
        self._progress.start()
        self._pace = IngestPace(sizes)
        self._files = (0, files)
        self._show()

    def read(self, kind: str, size: int, chunks: int) -> None:
        self._progress.update(self._task, description="ingest")
        self._pace = self._pace.with_read(kind, size, chunks)
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
        """Once, and only from an estimate that counts every chunk embedded so far (a batch is
        embedded while its last file is still being read, so this usually happens at that file's
        end, not at the batch) and that has read ANNOUNCE_AFTER_READ of the bytes and some of every
        kind of file that holds a sizable share of them (IngestPace.kinds_sampled)."""
        p = self._pace
        left = p.seconds_left
        sampled = p.bytes_read >= ANNOUNCE_AFTER_READ * p.bytes_total and p.kinds_sampled
        if not self._announced and p.grounded and sampled and left is not None and left > LONG_INGEST_SECONDS:
            self._announced = True
            self._progress.console.print(
                f"this ingest will take about {_duration(left)} more "
                f"(~{p.chunks_expected:,} chunks at {p.chunks_per_second:.1f} chunks/s); "
                "Ctrl-C stops it safely and the next ingest continues",
                markup=False,
            )

    def _show(self) -> None:
        p = self._pace
        # No total while a sizable kind of file is unread: it would take another kind's rate.
        expected = p.chunks_expected if p.kinds_sampled else None
        left = p.seconds_left if p.kinds_sampled else None
        self._progress.update(
            self._task,
            total=expected,
            completed=p.chunks_embedded,
            chunks=f"{p.chunks_embedded}/{'?' if expected is None else f'~{expected}'}",
            files=f"{self._files[0]}/{self._files[1]}",
            left="-" if left is None else f"~{clock_text(left)}",
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
            BarColumn(bar_width=None, table_column=Column(max_width=BAR_WIDTH)),
            MofNCompleteColumn(table_column=_whole()),
            TextColumn("chunks · {task.fields[rate]}/s ·", table_column=_whole()),
            _Times(table_column=_whole()),
            console=console,
            expand=True,
        )
        self._task = self._progress.add_task("graph", total=None, rate="-", left="-")

    def __call__(self, status: GraphBuildStatus) -> None:
        self._progress.start()
        eta = status.eta_seconds
        self._progress.update(
            self._task,
            total=status.total,
            completed=status.done,
            rate=f"{status.rate:.2f}",
            left="-" if eta is None else f"~{clock_text(eta)}",
        )


def _duration(seconds: float) -> str:
    minutes = int(seconds) // 60
    if minutes >= 60:
        return f"{minutes // 60}h{minutes % 60:02d}m"
    return f"{minutes}m{int(seconds) % 60:02d}s"
