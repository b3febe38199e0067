"""Reciprocal rank fusion: combines ranked lists without comparing their incomparable scores."""

from __future__ import annotations

from collections.abc import Sequence


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], *, k: int = 60) -> list[tuple[str, float]]:
    """Score of an id = sum over lists of 1 / (k + rank), rank 1-based; best first.

    Ties break by the order of first appearance, so the result is deterministic.
    """
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    first_seen = {item: i for i, item in enumerate(dict.fromkeys(x for r in rankings for x in r))}
    return sorted(scores.items(), key=lambda pair: (-pair[1], first_seen[pair[0]]))
