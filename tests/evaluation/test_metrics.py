"""Ranking metrics checked against values worked out by hand from the trec_eval definitions."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from math import log2

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from raggity.evaluation.metrics import evaluate_run, mrr_at_k, ndcg_at_k, percentile, recall_at_k

Metric = Callable[[Sequence[str], Mapping[str, int], int], float]

# The worked example: d1 is highly relevant, d2 relevant, d3 judged non-relevant, x unjudged.
RELS = {"d1": 2, "d2": 1, "d3": 0}
RANKED = ["d3", "d1", "x", "d2"]
# DCG@10 = 0/log2(2) + 2/log2(3) + 0/log2(4) + 1/log2(5)   (gain = grade, rank r discounted by log2(r+1))
DCG = 2 / log2(3) + 1 / log2(5)  # = 1.26186 + 0.43068 = 1.69254
# IDCG@10 = judged grades sorted descending, [2, 1]: 2/log2(2) + 1/log2(3)
IDCG = 2 / log2(2) + 1 / log2(3)  # = 2 + 0.63093 = 2.63093


def test_ndcg_worked_example() -> None:
    assert ndcg_at_k(RANKED, RELS, 10) == pytest.approx(DCG / IDCG)
    assert ndcg_at_k(RANKED, RELS, 10) == pytest.approx(0.643322, abs=1e-6)


def test_ndcg_uses_linear_gain_not_exponential() -> None:
    # With 2^rel - 1 the gains would be 3 and 1: (3/log2(3) + 1/log2(5)) / (3 + 1/log2(3)) = 0.6775.
    exponential = (3 / log2(3) + 1 / log2(5)) / (3 + 1 / log2(3))
    assert ndcg_at_k(RANKED, RELS, 10) != pytest.approx(exponential)


def test_ndcg_cut_smaller_than_list() -> None:
    # k=3 drops d2 at rank 4: DCG@3 = 2/log2(3); IDCG@3 still holds both grades (only 2 relevant).
    assert ndcg_at_k(RANKED, RELS, 3) == pytest.approx((2 / log2(3)) / IDCG)  # = 0.479625
    # k=1: the top document d3 has grade 0, so DCG@1 = 0.
    assert ndcg_at_k(RANKED, RELS, 1) == 0.0


def test_ndcg_ideal_counts_relevant_documents_never_retrieved() -> None:
    rels = {"a": 3, "b": 2, "c": 1}
    # Only c retrieved, at rank 1: DCG = 1/log2(2) = 1.
    # IDCG@10 = 3/log2(2) + 2/log2(3) + 1/log2(4) = 3 + 1.26186 + 0.5 = 4.76186.
    assert ndcg_at_k(["c"], rels, 10) == pytest.approx(1 / (3 + 2 / log2(3) + 1 / 2))  # = 0.210002
    # IDCG is cut at k too: IDCG@1 = 3, so 1/3.
    assert ndcg_at_k(["c"], rels, 1) == pytest.approx(1 / 3)


def test_negative_grades_count_as_non_relevant() -> None:
    rels = {"a": -1, "b": 1}
    # a earns no gain: DCG = 0 + 1/log2(3) = 0.63093; IDCG = 1/log2(2) = 1.
    assert ndcg_at_k(["a", "b"], rels, 10) == pytest.approx(1 / log2(3))
    assert recall_at_k(["a", "b"], rels, 10) == 1.0
    assert mrr_at_k(["a", "b"], rels, 10) == 0.5


def test_perfect_ranking_scores_one() -> None:
    assert ndcg_at_k(["d1", "d2", "d3"], RELS, 10) == pytest.approx(1.0)


def test_recall_worked_example() -> None:
    # 2 relevant documents (d1, d2); d3 has grade 0 and does not count.
    assert recall_at_k(RANKED, RELS, 10) == 1.0  # d1 and d2 both in the top 10: 2/2
    assert recall_at_k(RANKED, RELS, 3) == 0.5  # only d1 (rank 2) in the top 3: 1/2
    assert recall_at_k(RANKED, RELS, 1) == 0.0  # d3 alone: 0/2


def test_mrr_worked_example() -> None:
    assert mrr_at_k(RANKED, RELS, 10) == 0.5  # first relevant document d1 is at rank 2
    assert mrr_at_k(RANKED, RELS, 2) == 0.5
    assert mrr_at_k(RANKED, RELS, 1) == 0.0  # rank 2 is outside the cut


def test_no_relevant_document_retrieved() -> None:
    assert ndcg_at_k(["x", "y"], RELS, 10) == 0.0
    assert recall_at_k(["x", "y"], RELS, 10) == 0.0
    assert mrr_at_k(["x", "y"], RELS, 10) == 0.0
    assert ndcg_at_k([], RELS, 10) == 0.0


def test_no_relevant_judgement_scores_zero() -> None:
    assert ndcg_at_k(["a"], {"a": 0}, 10) == 0.0
    assert recall_at_k(["a"], {"a": 0}, 10) == 0.0
    assert mrr_at_k(["a"], {}, 10) == 0.0


@pytest.mark.parametrize("metric", [ndcg_at_k, recall_at_k, mrr_at_k])
def test_duplicates_are_rejected(metric: Metric) -> None:
    # Rejected even when the duplicate lies beyond k: the ranking itself is malformed.
    with pytest.raises(ValueError, match="'d1' more than once"):
        metric(["d1", "x", "d1"], RELS, 1)


@pytest.mark.parametrize("metric", [ndcg_at_k, recall_at_k, mrr_at_k])
def test_k_must_be_positive(metric: Metric) -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        metric(RANKED, RELS, 0)


def test_evaluate_run_means_over_judged_queries() -> None:
    qrels = {
        "q1": RELS,
        "q2": {"e": 1},  # missing from the run: scores 0 everywhere
        "q3": {"f": 0},  # no relevant document: left out of the mean, as trec_eval does
    }
    run = {"q1": RANKED, "q3": ["f"], "q4": ["zzz"]}  # q4 has no judgements: ignored
    scores = evaluate_run(run, qrels)
    assert list(scores) == ["ndcg@10", "recall@10", "recall@100", "mrr@10"]
    # Two scored queries (q1, q2), so each mean is (q1 + 0) / 2.
    assert scores["ndcg@10"] == pytest.approx((DCG / IDCG) / 2)  # = 0.321661
    assert scores["recall@10"] == 0.5  # (1 + 0) / 2
    assert scores["recall@100"] == 0.5
    assert scores["mrr@10"] == 0.25  # (1/2 + 0) / 2


def test_evaluate_run_custom_cuts() -> None:
    scores = evaluate_run({"q1": RANKED}, {"q1": RELS}, k_values=(3, 1))
    # nDCG and MRR at the smallest cut, recall at every cut.
    assert scores == {"ndcg@1": 0.0, "recall@1": 0.0, "recall@3": 0.5, "mrr@1": 0.0}


def test_evaluate_run_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="no query in qrels has a relevant document"):
        evaluate_run({"q": ["a"]}, {"q": {"a": 0}})
    with pytest.raises(ValueError, match="no query"):
        evaluate_run({}, {})
    with pytest.raises(ValueError, match="k_values"):
        evaluate_run({"q1": RANKED}, {"q1": RELS}, k_values=())
    with pytest.raises(ValueError, match="more than once"):
        evaluate_run({"q1": ["d1", "d1"]}, {"q1": RELS})


ids = st.sampled_from([f"d{i}" for i in range(12)])


@given(
    ranked=st.lists(ids, unique=True, max_size=12),
    rels=st.dictionaries(ids, st.integers(min_value=-1, max_value=3), max_size=12),
    k=st.integers(min_value=1, max_value=15),
)
def test_metrics_stay_within_zero_and_one(ranked: list[str], rels: dict[str, int], k: int) -> None:
    for metric in (ndcg_at_k, recall_at_k, mrr_at_k):
        assert 0.0 <= metric(ranked, rels, k) <= 1.0 + 1e-12


def test_percentile_by_hand() -> None:
    values = [4.0, 1.0, 3.0, 2.0]  # sorted: 1, 2, 3, 4
    assert percentile(values, 50) == 2.5  # position (4-1)*0.5 = 1.5: halfway between 2 and 3
    assert percentile(values, 95) == pytest.approx(3.85)  # position 2.85: 3 + 0.85*(4-3)
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 4.0
    assert percentile([7.0], 95) == 7.0


@given(
    values=st.lists(st.floats(min_value=0, max_value=1e4), min_size=1, max_size=50),
    p=st.floats(min_value=0, max_value=100),
)
def test_percentile_matches_numpy(values: list[float], p: float) -> None:
    assert percentile(values, p) == pytest.approx(float(np.percentile(values, p)), rel=1e-9, abs=1e-9)


def test_percentile_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="empty"):
        percentile([], 50)
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        percentile([1.0], 101)
