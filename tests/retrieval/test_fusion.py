"""Reciprocal rank fusion: hand-computed scores and tie-breaking."""

from __future__ import annotations

import pytest

from raggity.retrieval.fusion import reciprocal_rank_fusion


def test_hand_computed_example_with_k_60() -> None:
    dense = ["a", "b", "c"]
    bm25 = ["c", "a", "d"]

    fused = reciprocal_rank_fusion([dense, bm25], k=60)

    # a: rank 1 in dense, rank 2 in bm25 -> 1/61 + 1/62 = 0.0163934 + 0.0161290 = 0.0325225
    # c: rank 3 in dense, rank 1 in bm25 -> 1/63 + 1/61 = 0.0158730 + 0.0163934 = 0.0322664
    # b: rank 2 in dense only            -> 1/62                                 = 0.0161290
    # d: rank 3 in bm25 only             -> 1/63                                 = 0.0158730
    assert [item for item, _ in fused] == ["a", "c", "b", "d"]
    scores = dict(fused)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["b"] == pytest.approx(1 / 62)
    assert scores["d"] == pytest.approx(1 / 63)
    assert scores["a"] == pytest.approx(0.0325225, abs=1e-7)
    assert scores["c"] == pytest.approx(0.0322664, abs=1e-7)


def test_default_k_is_60() -> None:
    assert reciprocal_rank_fusion([["x"]]) == [("x", pytest.approx(1 / 61))]


def test_k_changes_the_scores() -> None:
    # k = 1: x -> 1/(1+1) = 1/2; y -> 1/(1+2) + 1/(1+1) = 1/3 + 1/2 = 5/6
    fused = reciprocal_rank_fusion([["x", "y"], ["y"]], k=1)

    assert [item for item, _ in fused] == ["y", "x"]
    assert dict(fused) == {"y": pytest.approx(5 / 6), "x": pytest.approx(1 / 2)}


def test_ties_break_by_first_appearance() -> None:
    # a and c both score 1/61, b and d both 1/62; a appears before c, b before d.
    fused = reciprocal_rank_fusion([["a", "b"], ["c", "d"]], k=60)

    assert [item for item, _ in fused] == ["a", "c", "b", "d"]


def test_tie_on_swapped_ranks_keeps_first_seen_first() -> None:
    # b: 1/61 + 1/62, a: 1/62 + 1/61 -> equal; b is seen first.
    fused = reciprocal_rank_fusion([["b", "a"], ["a", "b"]], k=60)

    assert [item for item, _ in fused] == ["b", "a"]
    assert fused[0][1] == fused[1][1]


def test_id_in_both_lists_beats_single_list_ids_at_same_ranks() -> None:
    # shared: 1/62 + 1/62 = 0.0322581; x and y: 1/61 = 0.0163934 each.
    fused = reciprocal_rank_fusion([["x", "shared"], ["y", "shared"]], k=60)

    assert [item for item, _ in fused] == ["shared", "x", "y"]
    assert dict(fused)["shared"] == pytest.approx(2 / 62)


def test_single_list_keeps_its_order() -> None:
    fused = reciprocal_rank_fusion([["q", "w", "e"]], k=10)

    assert fused == [("q", pytest.approx(1 / 11)), ("w", pytest.approx(1 / 12)), ("e", pytest.approx(1 / 13))]


@pytest.mark.parametrize("rankings", [[], [[]], [[], []]])
def test_no_ids_gives_empty_result(rankings: list[list[str]]) -> None:
    assert reciprocal_rank_fusion(rankings) == []
