"""Time left in an ingest comes from the work left: hand-computed examples."""

from __future__ import annotations

import pytest

from raggity.pipeline.ingest.pace import IngestPace, kind_of


def pace(planned: int, read: int = 0, chunks: int = 0, embedded: int = 0, seconds: float = 0.0) -> IngestPace:
    """One kind of file: `read` of `planned` bytes gave `chunks`."""
    return IngestPace({".txt": planned}, chunks_embedded=embedded, seconds=seconds).with_read(
        ".txt", read, chunks
    )


def test_nothing_is_promised_before_text_was_read_and_embedded() -> None:
    assert pace(1000).chunks_expected is None
    assert pace(1000, read=100, chunks=0).chunks_expected is None  # only empty files
    assert pace(1000, read=100, chunks=4).seconds_left is None  # no rate yet


def test_chunks_expected_extrapolate_the_mix_read_so_far() -> None:
    # 4 chunks from 100 bytes: the 900 bytes left should give 36 more.
    assert pace(1000, read=100, chunks=4).chunks_expected == 40


def test_each_kind_of_file_is_extrapolated_at_its_own_rate() -> None:
    # Plain text gave 1 chunk per 10 bytes, HTML 1 per 100, compressed files none: one rate for all
    # (5 chunks per 100 bytes) would promise 5 * 10 = 50 chunks from the 1,000 bytes of .gz left.
    planned = {".txt": 200, ".html": 2_000, ".gz": 1_000}
    read = (
        IngestPace(planned).with_read(".txt", 100, 10).with_read(".html", 1_000, 10).with_read(".gz", 100, 0)
    )
    assert read.chunks_expected == 20 + 10 + 10 + 0 + 0


def test_a_kind_not_read_yet_takes_the_rate_of_everything_read() -> None:
    read = IngestPace({".txt": 100, ".md": 500}).with_read(".txt", 100, 10)
    assert read.chunks_expected == 10 + 50


def test_seconds_left_are_chunks_left_over_the_embedding_rate() -> None:
    p = pace(1000, read=500, chunks=20, embedded=10, seconds=5.0)
    assert p.chunks_expected == 40
    assert p.chunks_per_second == pytest.approx(2.0)
    assert p.seconds_left == pytest.approx((40 - 10) / 2.0)


def test_a_finished_ingest_has_no_time_left() -> None:
    assert pace(1000, read=1000, chunks=40, embedded=40, seconds=20.0).seconds_left == 0.0


def test_an_ingest_with_nothing_to_read_expects_nothing() -> None:
    assert IngestPace().chunks_expected == 0  # shown as 0/0, not as an unknown total


def test_an_estimate_is_grounded_when_the_files_read_gave_every_chunk_embedded() -> None:
    assert pace(1000, read=100, chunks=40, embedded=40).grounded
    # 500 chunks embedded from a file not yet read to its end: the rate of the others misses it.
    assert not pace(4_400_000, read=20_000, chunks=40, embedded=540).grounded


def test_the_kind_of_a_file_is_its_suffix_in_lower_case() -> None:
    assert [kind_of(s) for s in ("/d/a.HTML", "/d/notes.tar.gz", "/d/.bashrc", "/d.v2/README")] == [
        ".html",
        ".gz",
        "",
        "",
    ]


def test_an_estimate_waits_for_every_kind_that_holds_a_sizable_share_of_the_bytes() -> None:
    # Slide decks read, sheets not yet: the sheets' 40% of the bytes would take the decks' rate.
    planned = {".pptx": 6_000, ".xlsx": 4_000, ".txt": 100}
    decks = IngestPace(planned).with_read(".pptx", 3_000, 30)
    assert not decks.kinds_sampled
    # A kind under SAMPLED_SHARE of the bytes is not waited for.
    assert decks.with_read(".xlsx", 500, 2).kinds_sampled
    assert IngestPace({".txt": 100}).with_read(".txt", 10, 1).kinds_sampled
