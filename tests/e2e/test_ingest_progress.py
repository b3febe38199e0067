"""The ingest bar tells the truth: its total is the chunks expected, and a long ingest is announced."""

from __future__ import annotations

import io

from rich.console import Console

from raggity.cli.progress import LONG_INGEST_SECONDS, RichIngestProgress, clock_text


class Bar:
    """The ingest bar, writing to a buffer, on a clock the test moves."""

    def __init__(self) -> None:
        self.buffer = io.StringIO()
        self.now = 0.0
        console = Console(file=self.buffer, width=200, force_terminal=False)
        self.progress = RichIngestProgress(console, clock=lambda: self.now)

    def announcements(self) -> int:
        return self.buffer.getvalue().count("this ingest will take about")


def test_a_long_ingest_is_announced_once_with_its_estimate() -> None:
    bar = Bar()
    with bar.progress as progress:
        progress.planned(100, {".html": 1_000_000})
        progress.read(".html", 200_000, 1_000)  # 20% of the bytes gave 1,000 chunks: about 5,000 in all
        bar.now = 100.0
        progress.advanced(0, 500, 128_000)  # 5 chunks/s: about 900 s left
        progress.advanced(0, 0, 0)
    assert bar.announcements() == 1
    assert "~5,000 chunks" in bar.buffer.getvalue()
    assert LONG_INGEST_SECONDS < 900


def test_the_announcement_waits_for_a_fifth_of_the_folder() -> None:
    # Files come in name order: on PostgreSQL's manual the first 2% of the bytes promised 61% more
    # chunks than came, the first 10% 33% more.
    bar = Bar()
    with bar.progress as progress:
        progress.planned(100, {".html": 1_000_000})
        progress.read(".html", 20_000, 160)  # 2% read: about 8,000 chunks
        bar.now = 32.0
        progress.advanced(0, 160, 40_960)  # 5 chunks/s: over 1,500 s left
        progress.read(".html", 80_000, 500)  # 10% read: about 6,600 chunks
        assert bar.announcements() == 0
        progress.read(".html", 100_000, 340)  # 20% read, 1,000 chunks: about 5,000
        bar.now = 100.0
        progress.advanced(0, 340, 87_040)
    assert bar.announcements() == 1
    assert "~5,000 chunks" in bar.buffer.getvalue()


def test_the_announcement_waits_for_the_file_its_batch_came_from() -> None:
    # The order of a real ingest: a batch is embedded while its last file is still being read.
    bar = Bar()
    with bar.progress as progress:
        progress.planned(100, {".html": 1_000_000})
        bar.now = 100.0
        progress.advanced(0, 500, 128_000)
        assert bar.announcements() == 0
        progress.read(
            ".html", 200_000, 1_000
        )  # that file gave 1,000 chunks from 20% of the bytes: about 5,000
    assert bar.announcements() == 1
    assert "~5,000 chunks" in bar.buffer.getvalue()


def test_no_announcement_from_a_rate_that_misses_the_file_being_embedded() -> None:
    # As on Sphinx's documentation: two small files, then 500 chunks of a big one embedded before
    # it was read to its end. The small files' rate promised ~8,800 chunks (over five minutes here).
    bar = Bar()
    with bar.progress as progress:
        progress.planned(100, {".html": 4_400_000})
        progress.read(".html", 20_000, 40)
        bar.now = 20.0
        progress.advanced(0, 500, 128_000)  # 25 chunks/s
        progress.read(".html", 900_000, 500)  # the big file: ~2,600 chunks in all, under two minutes left
        progress.advanced(1, 40, 10_240)
    assert bar.announcements() == 0


def test_a_short_ingest_is_not_announced() -> None:
    bar = Bar()
    with bar.progress as progress:
        progress.planned(2, {".html": 2_000})
        bar.now = 1.0
        progress.read(".html", 2_000, 4)
        progress.advanced(2, 4, 1_000)
    assert bar.announcements() == 0


def _final_bar(width: int) -> str:
    buffer = io.StringIO()
    now = [0.0]
    progress = RichIngestProgress(
        Console(file=buffer, width=width, force_terminal=False), clock=lambda: now[0]
    )
    with progress:
        progress.planned(5_000, {".html": 500_000_000})
        progress.read(".html", 356_000_000, 12_276)  # ~17,242 chunks in all
        now[0] = 1_003.0
        progress.advanced(1_200, 12_345, 3_160_320)  # 12.3 chunks/s: ~6:37 left
    return buffer.getvalue()


def test_the_bar_shows_elapsed_and_left_in_one_format_within_80_columns() -> None:
    lines = [line for line in _final_bar(80).splitlines() if line.strip()]
    assert len(lines) == 1, lines  # not wrapped
    bar = lines[0]
    assert len(bar) <= 80
    assert "12345/~17242 chunks · 1200/5000 files · 16:43 elapsed, ~6:37 left" in bar
    assert "0:00:" not in bar


def test_durations_read_as_a_clock() -> None:
    assert [clock_text(s) for s in (0, 27, 725, 3_723, 25_200.9)] == [
        "0:00",
        "0:27",
        "12:05",
        "1:02:03",
        "7:00:00",
    ]


def test_no_announcement_while_a_sizable_kind_of_file_is_unread() -> None:
    # Slide decks first in name order, sheets after: the decks' chunks per byte, taken for the sheets'
    # 40% of the bytes, promised far more chunks than came on a mixed folder of Office files.
    bar = Bar()
    with bar.progress as progress:
        progress.planned(100, {".pptx": 600_000, ".xlsx": 400_000})
        progress.read(".pptx", 300_000, 3_000)  # 30% read: by the decks' rate, ~10,000 chunks
        bar.now = 300.0
        progress.advanced(0, 3_000, 768_000)  # 10 chunks/s: 700 s left by that estimate
        assert bar.announcements() == 0
        progress.read(".xlsx", 100_000, 100)  # sheets give 1 chunk per 1,000 bytes
        bar.now = 310.0
        progress.advanced(0, 100, 25_600)  # 10 chunks/s: 330 s left
    assert bar.announcements() == 1
    assert "~6,400 chunks" in bar.buffer.getvalue()  # 3,100 read + 3,000 of decks + 300 of sheets to come
