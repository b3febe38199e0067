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
# Numbers keep their thousands separators and decimals together ("1,066", "3.5"), so "1,066" and
# "1066" are one word and "3.5" is not the two words "3" and "5".
_WORD = re.compile(r"\d+(?:[,.]\d+)*|[a-z]+")
_NUMBER = re.compile(r"\d")

# Share of a sentence's content words that must appear in the cited text for it to count as support.
SUPPORT_THRESHOLD = 0.5


def _stem(word: str) -> str:
    """A light suffix stripper: enough that "arrived"/"arrives"/"arriving" and "cities"/"city" meet."""
    if _NUMBER.match(word):
        return word.replace(",", "")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in ENGLISH_STOPWORDS and len(w) > 1}


def support(sentence: str, source_text: str, given: frozenset[str] = frozenset()) -> float:
    """Share of the sentence's claim found in the source; 0 when a number it states is not there.

    `given` are words the sentence may repeat without evidence (the question's own words): they
    appear in every retrieved source, so counting them would let any source "support" a made-up
    answer. A number is a specific claim (a date, a count): one the source lacks voids the support.
    """
    words = content_words(_MARKER.sub(" ", sentence))
    if not words:
        return 0.0  # a bare "[1] [2]" claims nothing, so it cannot count as backed by evidence
    found = content_words(source_text)
    if any(_NUMBER.match(w) and w not in found for w in words):
        return 0.0
    claim = (words - given) or words
    return len(claim & found) / len(claim)


@dataclass(frozen=True)
class CitationCheck:
    citations: tuple[Citation, ...]
    unsupported_sentences: tuple[str, ...]
    invalid_numbers: tuple[int, ...]


def sentences(answer: str) -> list[str]:
    parts: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(answer):
        parts.append(answer[start : match.end()].strip())
        start = match.end()
    parts.append(answer[start:].strip())
    return [p for p in parts if p]


def markers(sentence: str) -> list[int]:
    return [int(n) for n in _MARKER.findall(sentence)]


def without_markers(text: str) -> str:
    return re.sub(r"\s+([.!?,;:])", r"\1", _MARKER.sub("", text)).strip()


def check_citations(answer: str, sources: Sequence[PromptSource]) -> CitationCheck:
    by_n = {s.n: s for s in sources}
    cited: dict[int, bool] = {}
    unsupported: list[str] = []
    invalid: list[int] = []
    for sentence in sentences(answer):
        for n in markers(sentence):
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
