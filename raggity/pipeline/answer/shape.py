"""Tells a written answer from replies that only look like one: bare citation markers, headings or
titles, a list of names, which small models produce instead of answering, or the question said back
("Yes, there are known size limits to SQLite databases [1].", asked whether there are any)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from raggity.core.stopwords import ENGLISH_STOPWORDS
from raggity.pipeline.answer.citations import claim_words

AnswerShape = Literal["prose", "empty", "markers_only", "headings", "name_list", "restated"]

_MARKER = re.compile(r"\[\s*\d+\s*\]")
_LETTER = re.compile(r"[^\W\d_]")
_MARKDOWN_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _is_name(item: str) -> bool:
    """Only capitalised words, numbers and function words, no sentence punctuation: a name or title."""
    words = _WORD.findall(item)
    if not words or len(words) > 8 or re.search(r"[.!?]\s*$", item):
        return False
    return all(w[0].isupper() or w[0].isdigit() or w.lower() in ENGLISH_STOPWORDS for w in words)


def _items(text: str) -> list[str]:
    """Marker-led items ("[1] Edward Said [2] Ronald Robinson") or one item per line or bullet."""
    stripped = text.strip()
    marker_led = bool(_MARKER.match(stripped))
    parts = _MARKER.split(stripped) if marker_led else [_BULLET.sub("", line) for line in _lines(stripped)]
    cleaned = (_MARKER.sub("", p).strip(" \t-–—:;,") for p in parts)
    return [p for p in cleaned if p]


def adds_to(text: str, given: frozenset[str]) -> bool:
    """Whether `text` holds a claim word (citations.claim_words) that `given`, the question's claim
    words, lacks: a reply without one said the question back, with at most a yes or a no (stopwords)
    in front. No `given` (no question) finds nothing restated."""
    return not given or bool(claim_words(_MARKER.sub(" ", text)) - given)


def offers_alternatives(question: str) -> bool:
    """ "Which is older, the Louvre or the Prado?": naming one of the question's own alternatives
    answers it, so such a question is never said back."""
    return re.search(r"\bor\b", question, re.IGNORECASE) is not None


def answer_shape(text: str, headings: Sequence[str] = (), given: frozenset[str] = frozenset()) -> AnswerShape:
    """What kind of reply `text` is. `headings` are the sources' headings and titles: a reply made
    only of them repeats the sources' structure instead of answering. `given` are the question's
    claim words (empty for a question that offers alternatives): prose that adds none restates it."""
    if not text.strip():
        return "empty"
    bare = _MARKER.sub(" ", text)
    if not _LETTER.search(bare):
        return "markers_only"
    lines = _lines(bare)
    known = {h.strip().lower() for heading in headings for h in heading.split(" > ") if h.strip()}
    if lines and all(_MARKDOWN_HEADING.match(line) or line.strip("#*_ ").lower() in known for line in lines):
        return "headings"
    if len(lines) > 1 and len({line.lower() for line in lines}) == 1:
        return "headings"  # one title repeated: nothing was answered
    items = _items(text)
    if len(items) > 1 and all(_is_name(item) for item in items):
        return "name_list"
    return "prose" if adds_to(text, given) else "restated"


def is_answer(shape: AnswerShape) -> bool:
    return shape == "prose"
