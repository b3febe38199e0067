"""The one JSON shape of an answer, a search hit and a citation, for every door that prints JSON:
`rag ask --json`, `rag search --json`, `rag chat --json` and the MCP tools. One function each, so
the doors cannot drift apart (they once named a citation's file `source` in one and `path` in another).

The answer cache stores answers in a format of its own (pipeline/answer/cache.py): that one must
read back into an `Answer`, and changes with the cache's key, not with what the doors print.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from raggity.core.types import Answer, Candidate, Citation, Passage, StageTrace


def candidate_json(c: Candidate) -> dict[str, Any]:
    return {
        "id": c.chunk.id,
        "source": c.chunk.source,
        "location": str(c.chunk.location),
        "score": round(c.score, 6),
        "text": c.chunk.text,
        "stages": {
            "dense_rank": c.dense_rank,
            "bm25_rank": c.bm25_rank,
            "rrf_score": round(c.rrf_score, 6),
            "dense_cosine": None if c.dense_cosine is None else round(c.dense_cosine, 6),
            "rerank_score": None if c.rerank_score is None else round(c.rerank_score, 6),
            "origins": list(c.origins),
        },
    }


def trace_json(trace: Sequence[StageTrace]) -> list[dict[str, Any]]:
    return [
        {
            "stage": t.stage,
            "ms": t.ms,
            "n_in": t.n_in,
            "n_out": t.n_out,
            **({"detail": t.detail} if t.detail else {}),
        }
        for t in trace
    ]


def citation_json(c: Citation) -> dict[str, Any]:
    return {
        "n": c.n,
        "source": c.source,
        "location": str(c.location),
        "text": c.text,
        "supported": c.supported,
        # A reader (or an agent relaying the answer) must know when a source's text gives orders.
        "warning": c.warning or None,
        # The answer's sentences this source says in other words (attached by meaning, so no [n]
        # in the answer's text points here for them).
        "paraphrases": list(c.paraphrases),
    }


def passage_json(p: Passage) -> dict[str, Any]:
    """A passage a decline shows: where it is and its closest line, never cited as support."""
    return {"source": p.source, "location": str(p.location), "heading": p.heading, "snippet": p.snippet}


def answer_json(answer: Answer, *, with_trace: bool = True) -> dict[str, Any]:
    """`with_trace` False leaves the stage timings out (the MCP tools: an agent relays answers)."""
    data: dict[str, Any] = {
        "question": answer.question,
        "answer": answer.text,
        "declined": answer.declined,
        "abstained": answer.abstained,
        "refused": answer.refused,
        # Whether a source supports a sentence of it: true for every answer, since a reply no source
        # supports is declined; that reply is `unsupported_reply` (not an answer: never relay it as one).
        "verified": answer.verified,
        "unsupported_reply": answer.unsupported_reply or None,
        "cached": answer.cached,
        "citations": [citation_json(c) for c in answer.citations],
        "unsupported_sentences": list(answer.unsupported_sentences),
        "sources_read": [citation_json(c) for c in answer.sources_read],
        # A decline's closest passages (empty when it answered): where to read, not support.
        "closest": [passage_json(p) for p in answer.closest],
        # Files behind this answer that changed since they were indexed; on a decline, how many
        # files in the indexed folders are newer than the index.
        "changed_sources": list(answer.changed_sources),
        "newer_files": answer.newer_files,
    }
    if with_trace:
        data["trace"] = trace_json(answer.trace)
    return data
