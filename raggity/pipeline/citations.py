"""Resolves [n] markers in an answer to sources and flags citations the source does not support."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from raggity.core.stopwords import ENGLISH_STOPWORDS
from raggity.core.types import Citation
from raggity.pipeline.prompt import PromptSource

_MARKER = re.compile(r"\[(\d+)\]")
# A sentence ends at . ! or ? followed by space or the end, and owns the markers right after it:
# "Paris is in France. [1] It is big. [2]" cites [1] for the first sentence, not the second.
_SENTENCE_END = re.compile(r"[.!?]+(?:\s*\[\d+\])*(?=\s|$)|\n+")
_WORD = re.compile(r"[a-z0-9]+")

# Share of a sentence's content words that must appear in the cited text for it to count as support.
SUPPORT_THRESHOLD = 0.5


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in ENGLISH_STOPWORDS and len(w) > 1}


def support(sentence: str, source_text: str) -> float:
    words = content_words(_MARKER.sub(" ", sentence))
    if not words:
        return 0.0  # a bare "[1] [2]" claims nothing, so it cannot count as backed by evidence
    return len(words & content_words(source_text)) / len(words)


@dataclass(frozen=True)
class CitationCheck:
    citations: tuple[Citation, ...]
    unsupported_sentences: tuple[str, ...]
    invalid_numbers: tuple[int, ...]


def _sentences(answer: str) -> list[str]:
    parts: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(answer):
        parts.append(answer[start : match.end()].strip())
        start = match.end()
    parts.append(answer[start:].strip())
    return [p for p in parts if p]


def check_citations(answer: str, sources: Sequence[PromptSource]) -> CitationCheck:
    by_n = {s.n: s for s in sources}
    cited: dict[int, bool] = {}
    unsupported: list[str] = []
    invalid: list[int] = []
    for sentence in _sentences(answer):
        numbers = [int(n) for n in _MARKER.findall(sentence)]
        for n in numbers:
            source = by_n.get(n)
            if source is None:
                invalid.append(n)
                continue
            ok = support(sentence, source.text) >= SUPPORT_THRESHOLD
            cited[n] = cited.get(n, False) or ok
            if not ok and sentence not in unsupported:
                unsupported.append(sentence)
    citations = tuple(
        Citation(n, by_n[n].chunk.source, by_n[n].chunk.location, by_n[n].text, supported=ok)
        for n, ok in sorted(cited.items())
    )
    return CitationCheck(citations, tuple(unsupported), tuple(sorted(set(invalid))))
