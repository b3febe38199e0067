"""Turns a leaf retriever's (chunk id, score) pairs into ranked candidates read from the table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from raggity.core.types import Candidate
from raggity.store.vector_table import VectorTableReader


def ranked_candidates(
    pairs: Sequence[tuple[str, float]],
    table: VectorTableReader,
    *,
    origin: str,
    ranked_by: Literal["dense", "bm25", "graph"],
) -> list[Candidate]:
    """Candidates in the order given, with `origins == (origin,)` and their 1-based rank in this list
    as `dense_rank` or `bm25_rank`. Ids without a stored row (deleted by a concurrent ingest after
    this snapshot's manifest) are left out."""
    stored = table.fetch([cid for cid, _ in pairs])
    return [
        Candidate(
            chunk=stored[cid].chunk,
            score=score,
            dense_rank=rank if ranked_by == "dense" else None,
            bm25_rank=rank if ranked_by == "bm25" else None,
            origins=(origin,),
        )
        for rank, (cid, score) in enumerate(pairs, start=1)
        if cid in stored
    ]


def committed_pairs(
    pairs: Sequence[tuple[str, float]], table: VectorTableReader, live: frozenset[str] | None, limit: int
) -> list[tuple[str, float]]:
    """The first `limit` pairs whose chunk a committed manifest lists: those in `live`, or, when
    `live` is None (the table is open at a version that holds exactly the listed chunks), those
    with a row in it; rows read here are remembered by the reader for ranked_candidates."""
    if live is None:
        stored = table.fetch([cid for cid, _ in pairs])
        return [(cid, score) for cid, score in pairs if cid in stored][:limit]
    return [(cid, score) for cid, score in pairs if cid in live][:limit]
