"""Reciprocal rank fusion: combines ranked lists without comparing their incomparable scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


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


def passage_aware_fusion(
    rankings: Sequence[Sequence[str]], parent_of: Mapping[str, str], *, k: int = 60
) -> list[tuple[str, float]]:
    """RRF in which a passage's best chunk carries the whole passage's evidence.

    When a passage is split into several chunks, one list may rank its first chunk and another its
    second, and chunk-level fusion splits the passage's evidence between them. Here a passage ranks
    in each list where its best chunk does; the passage's best chunk (by chunk-level RRF) scores the
    passage's RRF, and its other chunks keep their own chunk-level score. A passage of one chunk
    scores exactly as in plain RRF.
    """
    chunk_scores = reciprocal_rank_fusion(rankings, k=k)
    passage_lists = [list(dict.fromkeys(parent_of.get(c, c) for c in ranking)) for ranking in rankings]
    passage_scores = dict(reciprocal_rank_fusion(passage_lists, k=k))
    order = {cid: i for i, (cid, _) in enumerate(chunk_scores)}
    seen: set[str] = set()
    scored = []
    for cid, score in chunk_scores:  # best first, so the first chunk met of a passage is its best
        passage = parent_of.get(cid, cid)
        scored.append((cid, score if passage in seen else passage_scores[passage]))
        seen.add(passage)
    return sorted(scored, key=lambda pair: (-pair[1], order[pair[0]]))
