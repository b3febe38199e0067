"""Selection after scoring: a frozen policy decides which scored candidates are kept."""

from __future__ import annotations

import itertools
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


# Most chunks one file gives of those chosen, while other files' candidates remain. A long page (a
# manual's user guide, a how-to) has many chunks that share the question's words, and took three or
# four of the five sources: the page that answers, ranked sixth or seventh, was not read at all. Two,
# not one: a reference page's answer and its caveat are often two sections of it.
PER_SOURCE = 2


def select_candidates(candidates: Sequence[Candidate], top_k: int, relevance_floor: float) -> list[Candidate]:
    """The best `top_k` candidates, at most PER_SOURCE from one file while others remain;
    `relevance_floor` applies to rerank scores only, since RRF scores have no absolute meaning.
    Search results and an answer's sources are chosen the same way."""
    scores = [c.rerank_score if c.rerank_score is not None else 1.0 for c in candidates]
    passed = SelectionPolicy(len(candidates), relevance_floor).select(candidates, scores)
    return spread_over_sources(passed, top_k)


def spread_over_sources(
    ranked: Sequence[Candidate], top_k: int, per_source: int = PER_SOURCE
) -> list[Candidate]:
    """The first `top_k` of `ranked` taking at most `per_source` from one file; when too few files
    remain, the best of the rest fill the places left. Rank order is kept."""
    taken: dict[str, int] = {}
    first: list[int] = []
    for i, candidate in enumerate(ranked):
        if taken.get(candidate.chunk.source, 0) < per_source:
            taken[candidate.chunk.source] = taken.get(candidate.chunk.source, 0) + 1
            first.append(i)
    chosen = set(first[:top_k])
    rest = (i for i in range(len(ranked)) if i not in chosen)
    chosen.update(itertools.islice(rest, top_k - len(chosen)))
    return [ranked[i] for i in sorted(chosen)]
