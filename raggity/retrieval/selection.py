"""Selection after scoring: a frozen policy decides which scored candidates are kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class SelectionPolicy:
    """Keep at most `top_k` items whose score is >= `min_score` (0 keeps everything)."""

    top_k: int
    min_score: float = 0.0

    def select(self, items: Sequence[T], scores: Sequence[float]) -> list[T]:
        kept = [item for item, score in zip(items, scores, strict=True) if score >= self.min_score]
        return kept[: self.top_k]
