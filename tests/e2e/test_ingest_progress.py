"""The ingest bar tells the truth: its total is the chunks expected, and a long ingest is announced."""

from __future__ import annotations

import io

from rich.console import Console

from raggity.cli.progress import LONG_INGEST_SECONDS, RichIngestProgress


def test_a_long_ingest_is_announced_once_with_its_estimate() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, force_terminal=False)
    now = [0.0]
    with RichIngestProgress(console, clock=lambda: now[0]) as progress:
        progress.planned(100, 1_000_000)
        progress.read(10_000, 50)  # 1% of the bytes gave 50 chunks: about 5,000 in all
        now[0] = 10.0
        progress.advanced(0, 50, 12_800)  # 5 chunks/s: about 990 s left
        progress.advanced(0, 50, 12_800)
    out = buffer.getvalue()
    assert out.count("this ingest will take about") == 1
    assert "~5,000 chunks" in out
    assert LONG_INGEST_SECONDS < 990


def test_a_short_ingest_is_not_announced() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, force_terminal=False)
    now = [0.0]
    with RichIngestProgress(console, clock=lambda: now[0]) as progress:
        progress.planned(2, 2_000)
        now[0] = 1.0
        progress.read(2_000, 4)
        progress.advanced(2, 4, 1_000)
    assert "this ingest will take" not in buffer.getvalue()
