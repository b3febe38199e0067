"""SelectionPolicy: top_k cut and inclusive min_score floor, in rank order."""

from __future__ import annotations

import pytest

from raggity.retrieval.selection import SelectionPolicy


def test_min_score_then_top_k_in_rank_order() -> None:
    items = ["a", "b", "c", "d", "e"]
    scores = [0.9, 0.3, 0.7, 0.6, 0.8]

    # Scores >= 0.5: a, c, d, e (b is dropped); the first two of those are a, c.
    assert SelectionPolicy(top_k=2, min_score=0.5).select(items, scores) == ["a", "c"]


def test_score_equal_to_min_is_kept() -> None:
    assert SelectionPolicy(top_k=5, min_score=0.5).select(["x", "y"], [0.5, 0.49]) == ["x"]


def test_top_k_larger_than_input_keeps_all_passing() -> None:
    assert SelectionPolicy(top_k=10, min_score=0.2).select(["x", "y", "z"], [0.1, 0.2, 0.9]) == ["y", "z"]


def test_default_min_score_keeps_zero_scores() -> None:
    assert SelectionPolicy(top_k=3).select(["x", "y", "z"], [0.0, 0.0, 1.0]) == ["x", "y", "z"]


def test_top_k_cuts_before_lower_ranks() -> None:
    assert SelectionPolicy(top_k=1).select(["x", "y", "z"], [0.1, 0.9, 0.5]) == ["x"]


def test_top_k_zero_selects_nothing() -> None:
    assert SelectionPolicy(top_k=0).select(["x"], [1.0]) == []


def test_mismatched_lengths_are_rejected() -> None:
    with pytest.raises(ValueError, match="zip"):
        SelectionPolicy(top_k=3).select(["x", "y"], [1.0])
