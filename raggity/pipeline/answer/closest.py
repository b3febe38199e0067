"""What a decline shows instead of an answer: the closest passages retrieval found, each with the
one line of it that shares most words with the question, so that the reader can read on there."""

from __future__ import annotations

from collections.abc import Sequence

from raggity.core.types import Candidate, Passage
from raggity.pipeline.answer.citations import claim_words
from raggity.pipeline.answer.focus import clean, document_sentences

CLOSEST = 3
SNIPPET_CHARS = 200


def closest_passages(
    question: str, candidates: Sequence[Candidate], limit: int = CLOSEST
) -> tuple[Passage, ...]:
    """The best `limit` candidates as passages, one per file and place, in rank order."""
    asked = claim_words(question)
    passages: list[Passage] = []
    seen: set[tuple[str, str]] = set()
    for candidate in candidates:
        chunk = candidate.chunk
        place = (chunk.source, str(chunk.location))
        if place in seen:
            continue
        seen.add(place)
        passages.append(
            Passage(chunk.source, chunk.location, chunk.heading, snippet(asked, chunk.text, chunk.heading))
        )
        if len(passages) == limit:
            break
    return tuple(passages)


def snippet(asked: set[str] | frozenset[str], text: str, heading: str = "") -> str:
    """The sentence of `text` with most of the question's words, on one line. On a tie the first
    that is not a heading wins: the heading is shown beside the passage already."""
    titles = {t.strip() for t in heading.split(" > ")}

    def rank(sentence: str) -> tuple[int, bool]:
        bare = sentence.lstrip("#").strip()
        return len(asked & claim_words(sentence)), not (sentence.startswith("#") or bare in titles)

    sentences = document_sentences(clean(text)) or [text]
    best = max(sentences, key=rank)
    flat = " ".join(best.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"
