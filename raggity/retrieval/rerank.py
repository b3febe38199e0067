"""Cross-encoder reranking: a Scorer gives each candidate a score; the order follows it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from raggity.core.protocols import Scorer
from raggity.core.types import Candidate


def rerank(question: str, candidates: Sequence[Candidate], scorer: Scorer) -> list[Candidate]:
    """Candidates sorted by the scorer's score (stable for ties), each carrying its rerank_score."""
    scores = scorer.score(question, [c.chunk.search_text for c in candidates])
    scored = [replace(c, score=s, rerank_score=s) for c, s in zip(candidates, scores, strict=True)]
    return sorted(scored, key=lambda c: -c.score)
