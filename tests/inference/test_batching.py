"""plan_batches: length-sorted model calls under a row and a padded-token budget."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raggity.inference.batching import BatchLimits, plan_batches


@given(
    lengths=st.lists(st.integers(min_value=1, max_value=600), max_size=200),
    rows=st.integers(min_value=1, max_value=64),
    tokens=st.integers(min_value=1, max_value=20_000),
)
def test_every_text_once_in_length_order_within_the_limits(
    lengths: list[int], rows: int, tokens: int
) -> None:
    batches = plan_batches(lengths, BatchLimits(rows=rows, tokens=tokens))
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths)
    for batch in batches:
        padded = len(batch) * max(lengths[i] for i in batch)
        assert len(batch) <= rows
        assert padded <= tokens or len(batch) == 1


def test_short_texts_are_not_padded_to_the_long_ones() -> None:
    lengths = [300, 12] * 8
    batches = plan_batches(lengths, BatchLimits(rows=8, tokens=4096))
    assert batches[0] == [1, 3, 5, 7, 9, 11, 13, 15]
    assert all(lengths[i] == 300 for batch in batches[1:] for i in batch)


def test_the_token_budget_splits_long_texts_into_smaller_calls() -> None:
    batches = plan_batches([300] * 32, BatchLimits(rows=32, tokens=4096))
    assert [len(batch) for batch in batches] == [13, 13, 6]


def test_a_text_longer_than_the_budget_gets_a_call_of_its_own() -> None:
    assert plan_batches([50, 9000, 40], BatchLimits(rows=8, tokens=100)) == [[2, 0], [1]]


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        BatchLimits(rows=0, tokens=10)
