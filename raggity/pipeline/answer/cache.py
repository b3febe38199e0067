"""The answer cache: answers keyed by exactly what the model would be shown.

Answer keys cover each source the model is shown (chunk id, location and text, after parent
expansion), so a re-ingest that edits a file the answer relied on, or moves its text, changes the
key instead of serving a stale answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from raggity.core.types import Answer, Chunk, Citation, Location
from raggity.pipeline.answer.citations import SUPPORT_RULE_VERSION
from raggity.pipeline.answer.prompt import PROMPT_VERSION
from raggity.store.cache_store import CacheStore, digest


@dataclass(frozen=True)
class AnswerCache:
    """Answers for one generator; `seed` is the generator's sampling seed."""

    store: CacheStore
    generator_identity: str
    seed: int

    def key(self, question: str, chunks: Sequence[Chunk], options: Mapping[str, object]) -> str:
        """Keyed by exactly what the model would be shown: each source's id, where it sits (a cached
        answer's citations carry line ranges, which move when text is added above), and its text
        (with parent expansion, a neighbouring chunk's edit changes the passage, not the hit's id)."""
        sources = [
            [c.id, str(c.location), hashlib.sha256(c.text.encode("utf-8", "surrogatepass")).hexdigest()]
            for c in chunks
        ]
        return digest(
            "answer",
            question,
            sources,
            self.generator_identity,
            PROMPT_VERSION,
            SUPPORT_RULE_VERSION,
            {**options, "seed": self.seed},
        )

    def get(self, key: str) -> Answer | None:
        data = self.store.get(key)
        if data is None or data.get("kind") != "answer":
            return None
        try:
            return answer_from_json(data)
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, key: str, answer: Answer) -> None:
        self.store.put(key, answer_to_json(answer))


def answer_to_json(answer: Answer) -> dict[str, Any]:
    return {
        "kind": "answer",
        "question": answer.question,
        "text": answer.text,
        "abstained": answer.abstained,
        "citations": [_citation_to_json(c) for c in answer.citations],
        "unsupported_sentences": list(answer.unsupported_sentences),
        "sources_read": [_citation_to_json(c) for c in answer.sources_read],
    }


def answer_from_json(data: dict[str, Any]) -> Answer:
    """The cached answer, without a trace (the caller attaches the current one)."""
    return Answer(
        str(data["question"]),
        str(data["text"]),
        bool(data["abstained"]),
        tuple(_citation_from_json(c) for c in data["citations"]),
        (),
        cached=True,
        unsupported_sentences=tuple(str(s) for s in data["unsupported_sentences"]),
        # Required: an entry from before it was recorded is a miss, answered anew, so that --json
        # lists the sources the model read.
        sources_read=tuple(_citation_from_json(c) for c in data["sources_read"]),
    )


def _citation_to_json(c: Citation) -> dict[str, Any]:
    location = c.location
    return {
        "n": c.n,
        "source": c.source,
        "location": [
            location.line_start,
            location.line_end,
            location.page_start,
            location.page_end,
            location.anchor,
        ],
        "text": c.text,
        "supported": c.supported,
        "paraphrases": list(c.paraphrases),
    }


def _citation_from_json(c: dict[str, Any]) -> Citation:
    return Citation(
        int(c["n"]),
        str(c["source"]),
        Location(*c["location"]),
        str(c["text"]),
        bool(c["supported"]),
        # Required: an entry from before the meaning stage ran ahead of storing is a miss, since a
        # hit skips that stage.
        paraphrases=tuple(str(p) for p in c["paraphrases"]),
    )
