"""should_abstain: abstain when nothing was found or the best dense cosine is below the floor."""

from __future__ import annotations

import pytest

from raggity.retrieval.abstain import should_abstain


def test_nothing_retrieved_abstains() -> None:
    assert should_abstain([], 0.0) is True


def test_only_unknown_cosines_abstains() -> None:
    # BM25-only candidates have no dense cosine: they are not evidence of closeness.
    assert should_abstain([None, None], 0.0) is True


def test_unknown_cosines_are_ignored_next_to_known_ones() -> None:
    assert should_abstain([None, 0.6, None], 0.5) is False
    assert should_abstain([None, 0.4, None], 0.5) is True


def test_best_cosine_decides_not_the_first() -> None:
    assert should_abstain([0.1, 0.2, 0.9], 0.5) is False


def test_cosine_at_floor_does_not_abstain() -> None:
    assert should_abstain([0.3], 0.3) is False


@pytest.mark.parametrize("best", [0.2999, 0.0, -0.5])
def test_cosine_below_floor_abstains(best: float) -> None:
    assert should_abstain([best, best - 0.1], 0.3) is True


def test_zero_floor_accepts_zero_but_not_negative() -> None:
    assert should_abstain([0.0], 0.0) is False
    assert should_abstain([-0.01], 0.0) is True
