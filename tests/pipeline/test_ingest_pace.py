"""Time left in an ingest comes from the work left: hand-computed examples."""

from __future__ import annotations

import pytest

from raggity.pipeline.ingest.pace import IngestPace


def test_nothing_is_promised_before_text_was_read_and_embedded() -> None:
    assert IngestPace(1000).chunks_expected is None
    assert IngestPace(1000, bytes_read=100, chunks_read=0).chunks_expected is None  # only empty files
    assert IngestPace(1000, bytes_read=100, chunks_read=4).seconds_left is None  # no rate yet


def test_chunks_expected_extrapolate_the_mix_read_so_far() -> None:
    # 4 chunks from 100 bytes: the 900 bytes left should give 36 more.
    pace = IngestPace(1000, bytes_read=100, chunks_read=4)
    assert pace.chunks_expected == 40


def test_seconds_left_are_chunks_left_over_the_embedding_rate() -> None:
    pace = IngestPace(1000, bytes_read=500, chunks_read=20, chunks_embedded=10, seconds=5.0)
    assert pace.chunks_expected == 40
    assert pace.chunks_per_second == pytest.approx(2.0)
    assert pace.seconds_left == pytest.approx((40 - 10) / 2.0)


def test_a_finished_ingest_has_no_time_left() -> None:
    pace = IngestPace(1000, bytes_read=1000, chunks_read=40, chunks_embedded=40, seconds=20.0)
    assert pace.seconds_left == 0.0


def test_an_ingest_with_nothing_to_read_expects_nothing() -> None:
    assert IngestPace(0).chunks_expected == 0  # shown as 0/0, not as an unknown total


def test_an_estimate_is_grounded_when_the_files_read_gave_every_chunk_embedded() -> None:
    assert IngestPace(1000, bytes_read=100, chunks_read=40, chunks_embedded=40).grounded
    # 500 chunks embedded from a file not yet read to its end: the rate of the others misses it.
    assert not IngestPace(4_400_000, bytes_read=20_000, chunks_read=40, chunks_embedded=540).grounded
