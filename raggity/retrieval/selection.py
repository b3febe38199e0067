"""Selection after scoring: a frozen policy decides which scored candidates are kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from raggity.core.types import Candidate

T = TypeVar("T")


@dataclass(frozen=True)
class SelectionPolicy:
    """Keep at most `top_k` items whose score is >= `min_score` (0 keeps everything)."""

    top_k: int
    min_score: float = 0.0

    def select(self, items: Sequence[T], scores: Sequence[float]) -> list[T]:
        kept = [item for item, score in zip(items, scores, strict=True) if score >= self.min_score]
        return kept[: self.top_k]


def select_candidates(candidates: Sequence[Candidate], top_k: int, relevance_floor: float) -> list[Candidate]:
    """The best `top_k` candidates; `relevance_floor` applies to rerank scores only, since RRF scores
    have no absolute meaning. Search results and an answer's sources are chosen the same way."""
    scores = [c.rerank_score if c.rerank_score is not None else 1.0 for c in candidates]
    return SelectionPolicy(top_k, relevance_floor).select(candidates, scores)
