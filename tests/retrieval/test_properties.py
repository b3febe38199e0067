"""Hypothesis properties of fusion, dedup, selection and lost-in-the-middle ordering."""

from __future__ import annotations

from fractions import Fraction
from itertools import pairwise

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from raggity.retrieval.dedup import dedup_indices
from raggity.retrieval.fusion import reciprocal_rank_fusion
from raggity.retrieval.selection import SelectionPolicy

# --- reciprocal rank fusion ----------------------------------------------------------------------

_rankings = st.lists(st.lists(st.sampled_from("abcdefghijkl"), unique=True, max_size=12), max_size=5)
_rrf_k = st.integers(min_value=1, max_value=100)


def _exact_rrf(rankings: list[list[str]], k: int) -> dict[str, Fraction]:
    """sum over lists of 1 / (k + rank), rank 1-based, in exact arithmetic."""
    scores: dict[str, Fraction] = {}
    for ranking in rankings:
        for item in ranking:
            rank = ranking.index(item) + 1
            scores[item] = scores.get(item, Fraction(0)) + Fraction(1, k + rank)
    return scores


@given(_rankings, _rrf_k)
def test_rrf_returns_each_input_id_once(rankings: list[list[str]], k: int) -> None:
    ids = [item for item, _ in reciprocal_rank_fusion(rankings, k=k)]

    assert len(ids) == len(set(ids))
    assert set(ids) == {item for ranking in rankings for item in ranking}


@given(_rankings, _rrf_k)
def test_rrf_scores_match_formula_and_descend(rankings: list[list[str]], k: int) -> None:
    fused = reciprocal_rank_fusion(rankings, k=k)
    exact = _exact_rrf(rankings, k)

    for item, score in fused:
        assert score == pytest.approx(float(exact[item]), rel=1e-12)
    scores = [score for _, score in fused]
    assert scores == sorted(scores, reverse=True)


@given(_rankings, _rrf_k)
def test_rrf_equal_scores_keep_first_appearance_order(rankings: list[list[str]], k: int) -> None:
    first_seen: list[str] = []
    for ranking in rankings:
        first_seen.extend(item for item in ranking if item not in first_seen)
    fused = reciprocal_rank_fusion(rankings, k=k)

    for (a, score_a), (b, score_b) in pairwise(fused):
        if score_a == score_b:
            assert first_seen.index(a) < first_seen.index(b)


@given(_rankings.flatmap(lambda r: st.tuples(st.just(r), st.permutations(r))), _rrf_k)
def test_rrf_scores_ignore_list_order(pair: tuple[list[list[str]], list[list[str]]], k: int) -> None:
    rankings, permuted = pair

    original = dict(reciprocal_rank_fusion(rankings, k=k))
    shuffled = dict(reciprocal_rank_fusion(permuted, k=k))

    assert shuffled.keys() == original.keys()
    for item, score in original.items():
        assert shuffled[item] == pytest.approx(score, rel=1e-12)


# --- near-duplicate removal ------------------------------------------------------------------------

_component = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
_vectors = st.lists(st.tuples(_component, _component, _component), min_size=0, max_size=12)


def _normalised(rows: list[tuple[float, float, float]]) -> npt.NDArray[np.float32]:
    matrix = np.asarray(rows, dtype=np.float64).reshape(len(rows), 3)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    assume(bool(np.all(norms > 0.1)))
    return (matrix / norms).astype(np.float32)


def _cosine(matrix: npt.NDArray[np.float32], i: int, j: int) -> float:
    return sum(float(x) * float(y) for x, y in zip(matrix[i], matrix[j], strict=True))


@settings(deadline=None)
@given(_vectors, st.floats(min_value=0.0, max_value=1.0))
def test_dedup_keeps_a_maximal_set_of_non_duplicates(
    rows: list[tuple[float, float, float]], threshold: float
) -> None:
    matrix = _normalised(rows)
    n = len(matrix)
    cos = {(i, j): _cosine(matrix, i, j) for i in range(n) for j in range(n) if i < j}
    # float32 rounding may flip a pair sitting right at the threshold; such inputs prove nothing.
    assume(all(abs(c - threshold) > 1e-5 for c in cos.values()))

    kept = dedup_indices(matrix, threshold)

    assert kept == sorted(set(kept))
    for index, i in enumerate(kept):
        for j in kept[index + 1 :]:
            assert cos[(i, j)] < threshold, f"kept rows {i} and {j} are duplicates"
    for j in set(range(n)) - set(kept):
        assert any(cos[(i, j)] >= threshold for i in kept if i < j), f"row {j} dropped without a kept match"


# --- selection --------------------------------------------------------------------------------------

_score = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)


@given(st.lists(_score, max_size=20), st.integers(min_value=0, max_value=25), _score)
def test_selection_is_first_top_k_passing_items(scores: list[float], top_k: int, min_score: float) -> None:
    items = list(range(len(scores)))

    selected = SelectionPolicy(top_k=top_k, min_score=min_score).select(items, scores)

    assert len(selected) <= top_k
    assert selected == sorted(selected)  # items are their ranks: rank order is preserved
    assert all(scores[i] >= min_score for i in selected)
    expected: list[int] = []
    for i, score in enumerate(scores):
        if len(expected) == top_k:
            break
        if score >= min_score:
            expected.append(i)
    assert selected == expected
