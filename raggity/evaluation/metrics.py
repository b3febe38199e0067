"""Ranking metrics as trec_eval defines them (ndcg_cut, recall, recip_rank), plus a latency percentile."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

# query id -> doc id -> graded relevance; a grade > 0 means relevant.
Qrels = Mapping[str, Mapping[str, int]]
# query id -> ranked doc ids, best first, no duplicates.
Run = Mapping[str, Sequence[str]]


def _check(ranked: Sequence[str], k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    # A duplicate would be counted twice towards DCG and recall, so scores could exceed 1.
    seen: set[str] = set()
    for doc in ranked:
        if doc in seen:
            raise ValueError(f"ranking holds document {doc!r} more than once")
        seen.add(doc)


def _gain(judgements: Mapping[str, int], doc: str) -> int:
    # trec_eval gives unjudged and non-positive documents no gain.
    return max(judgements.get(doc, 0), 0)


def ndcg_at_k(ranked: Sequence[str], judgements: Mapping[str, int], k: int) -> float:
    """trec_eval ndcg_cut: linear gain (the grade), discount log2(rank + 1), 0.0 if nothing is relevant."""
    _check(ranked, k)
    dcg = sum(_gain(judgements, doc) / math.log2(rank + 1) for rank, doc in enumerate(ranked[:k], start=1))
    # The ideal ranking is every judged grade sorted best first, so it includes relevant
    # documents the run never retrieved.
    ideal = sorted((grade for grade in judgements.values() if grade > 0), reverse=True)[:k]
    idcg = sum(grade / math.log2(rank + 1) for rank, grade in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranked: Sequence[str], judgements: Mapping[str, int], k: int) -> float:
    """Relevant documents in the top k over all relevant documents; 0.0 if nothing is relevant."""
    _check(ranked, k)
    total = sum(1 for grade in judgements.values() if grade > 0)
    if total == 0:
        return 0.0
    found = sum(1 for doc in ranked[:k] if judgements.get(doc, 0) > 0)
    return found / total


def mrr_at_k(ranked: Sequence[str], judgements: Mapping[str, int], k: int) -> float:
    """1 / rank of the first relevant document within the top k, else 0.0."""
    _check(ranked, k)
    for rank, doc in enumerate(ranked[:k], start=1):
        if judgements.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def evaluate_run(run: Run, qrels: Qrels, *, k_values: Sequence[int] = (10, 100)) -> dict[str, float]:
    """Mean metrics over the queries in `qrels` that have at least one relevant document.

    Keys: ``ndcg@K`` and ``mrr@K`` for the smallest K, ``recall@K`` for every K (so the
    defaults give ndcg@10, recall@10, recall@100, mrr@10). A query missing from `run` scores
    0; queries in `run` but not in `qrels` are ignored.
    """
    if not k_values:
        raise ValueError("k_values must not be empty")
    ks = sorted(set(k_values))
    first = ks[0]
    # trec_eval skips queries without relevant judgements: they have no defined nDCG or recall.
    scored = [qid for qid, judged in qrels.items() if any(grade > 0 for grade in judged.values())]
    if not scored:
        raise ValueError("no query in qrels has a relevant document")
    totals: dict[str, float] = {f"ndcg@{first}": 0.0, **{f"recall@{k}": 0.0 for k in ks}, f"mrr@{first}": 0.0}
    for qid in scored:
        ranked = run.get(qid, ())
        judged = qrels[qid]
        totals[f"ndcg@{first}"] += ndcg_at_k(ranked, judged, first)
        for k in ks:
            totals[f"recall@{k}"] += recall_at_k(ranked, judged, k)
        totals[f"mrr@{first}"] += mrr_at_k(ranked, judged, first)
    return {name: total / len(scored) for name, total in totals.items()}


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0-100) with linear interpolation between ranks, as numpy's default."""
    if not values:
        raise ValueError("percentile of an empty sequence")
    if not 0 <= p <= 100:
        raise ValueError(f"p must be within [0, 100], got {p}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
