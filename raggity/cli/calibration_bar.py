"""The progress bar of `rag calibrate`."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Column

from raggity.cli.lazy_bar import LazyBar
from raggity.cli.progress import BAR_WIDTH, clock_text


class CalibrationBar(LazyBar):
    """Questions read out of the questions planned, and the time left at the pace so far. A new
    total (`--corpus` writes questions, then reads unrelated ones) starts a new pace."""

    def __init__(self, console: Console, label: str) -> None:
        self._progress = Progress(
            TextColumn(f"[bold]{label}"),
            BarColumn(bar_width=None, table_column=Column(max_width=BAR_WIDTH)),
            MofNCompleteColumn(table_column=Column(no_wrap=True)),
            TextColumn("questions · {task.fields[left]} left", table_column=Column(no_wrap=True)),
            console=console,
            expand=True,
        )
        self._task = self._progress.add_task(label, total=None, left="-")
        self._first: tuple[int, int, float] | None = None

    def __call__(self, done: int, total: int) -> None:
        self._progress.start()
        now = time.perf_counter()
        if self._first is None or done < self._first[1] or total != self._first[0]:
            self._first = (total, done, now)
        _, start_done, started = self._first
        left = "-"
        if done > start_done:
            left = f"~{clock_text((now - started) / (done - start_done) * (total - done))}"
        self._progress.update(self._task, total=total, completed=done, left=left)
