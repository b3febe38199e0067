"""SelectionPolicy: top_k cut and inclusive min_score floor, in rank order."""

from __future__ import annotations

import pytest

from raggity.core.types import Candidate, Chunk, Location
from raggity.retrieval.selection import SelectionPolicy, select_candidates


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


def _from(*sources: str) -> list[Candidate]:
    """Candidates in rank order, the n-th from file sources[n]."""
    return [
        Candidate(Chunk(f"c{n}", source, f"text {n}", "", Location(1, 1), f"p{n}", n, 5), 1.0 / (n + 1))
        for n, source in enumerate(sources)
    ]


def _picked(candidates: list[Candidate]) -> list[str]:
    return [c.chunk.id for c in candidates]


def test_one_file_gives_at_most_two_chunks_while_other_files_remain() -> None:
    # A long page holds ranks 0-3; the pages at ranks 4-6 come in for its third and fourth chunks.
    ranked = _from("guide.html", "guide.html", "guide.html", "guide.html", "a.html", "b.html", "c.html")

    assert _picked(select_candidates(ranked, 5, 0.0)) == ["c0", "c1", "c4", "c5", "c6"]


def test_the_rest_fill_the_places_left_in_rank_order() -> None:
    # Two files only: the third chunk of the first one fills the last place.
    ranked = _from("guide.html", "guide.html", "guide.html", "a.html", "guide.html")

    assert _picked(select_candidates(ranked, 4, 0.0)) == ["c0", "c1", "c2", "c3"]
    assert _picked(select_candidates(ranked, 10, 0.0)) == ["c0", "c1", "c2", "c3", "c4"]
