"""Context focusing: from each retrieved passage, the sentences that bear on the question.

A small model given five whole parent chunks answers from the wrong one or copies headings; given
the few sentences that share the question's words (with the sentence after each, where an answer
often continues), it answers more often and reads a shorter prompt, so the first token comes sooner.
Lines that are navigation, markup or minified code are dropped first: they carry no answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from raggity.core.types import Chunk
from raggity.pipeline.citations import SENTENCE_STOP, content_words

# Most sentences kept per source: the best matches, each with the sentence that follows it.
BEST_SENTENCES = 2
# A sentence runs to its stop and any closing quote or bracket, followed by a space or the end.
_SENTENCE = re.compile(rf"\S.*?(?:{SENTENCE_STOP}[\"')\]]*(?=\s|$)|$)")
_PARAGRAPH = re.compile(r"\n\s*\n")
# A line that starts its own unit even without a blank line before it: a heading or a list item.
_LINE_START = re.compile(r"^\s*(?:#{1,6}\s|[-*+•]\s|\d+[.)]\s)")
_GAP = " … "
_NAVIGATION = re.compile(
    r"^(?:skip to (?:main )?content|table of contents|contents|previous(?: topic| page)?|next(?: topic| page)?|"
    r"navigation|index|modules|search|menu|home|back to top|edit (?:on github|this page)|show source|"
    r"this page|quick search|©.*|copyright\b.*)\s*[:»«|]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class FocusedText:
    text: str
    matched: int  # sentences that share a content word with the question
    score: float  # the best sentence's weight (0 when nothing matched)


def is_boilerplate(line: str) -> bool:
    """Navigation labels, markup-only lines and minified code: lines with no prose to answer from."""
    stripped = line.strip()
    if not stripped:
        return False
    if _NAVIGATION.match(stripped):
        return True
    letters = sum(ch.isalpha() or ch.isspace() for ch in stripped)
    if letters / len(stripped) < 0.6:
        return True  # `[96, "UnboundLocalError: ..."]`, tables of symbols, markup
    return len(stripped) > 400 and stripped.count(" ") < len(stripped) / 40  # minified: long, few spaces


def clean(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not is_boilerplate(line))


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`. A line break inside a paragraph is wrapping, not an end: documentation is
    hard-wrapped at 80 columns, and cutting there split "Download its tarball,\nunpack it into ..."
    into a fragment that lost the instruction. Blank lines, headings and list items do end one."""
    pieces: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        current: list[str] = []
        for line in paragraph.splitlines():
            if _LINE_START.match(line) and current:
                pieces.append(" ".join(current))
                current = []
            current.append(line.strip())
            if line.lstrip().startswith("#"):  # a heading never runs on into the text below it
                pieces.append(" ".join(current))
                current = []
        pieces.append(" ".join(current))
    return [m.group(0).strip() for piece in pieces for m in _SENTENCE.finditer(piece) if m.group(0).strip()]


def idf_weights(question: str, texts: Sequence[str]) -> dict[str, float]:
    """Weight of each question word by how few of the candidate sentences contain it: a word in
    every sentence ("Normans" in an article about Normans) says little about where the answer is."""
    words = content_words(question)
    sentences = [content_words(s) for text in texts for s in split_sentences(clean(text))]
    n = max(len(sentences), 1)
    return {w: math.log(1 + n / (1 + sum(w in s for s in sentences))) for w in words}


def focus(text: str, weights: dict[str, float], *, best: int = BEST_SENTENCES) -> FocusedText:
    """The best-matching sentences of `text` with the sentence after each, in document order."""
    sentences = split_sentences(clean(text))
    if not sentences:
        return FocusedText("", 0, 0.0)
    scores = [sum(weights.get(w, 0.0) for w in content_words(s)) for s in sentences]
    ranked = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))[:best]
    if not ranked:
        return FocusedText(" ".join(sentences[: best + 1]), 0, 0.0)  # retrieved for meaning: keep its start
    keep = sorted({j for i in ranked for j in (i, i + 1) if j < len(sentences)})
    parts: list[str] = []
    for previous, index in zip([-1, *keep], keep, strict=False):
        if parts and index != previous + 1:
            parts.append(_GAP.strip())
        parts.append(sentences[index])
    matched = sum(s > 0 for s in scores)
    return FocusedText(" ".join(parts), matched, max(scores))


def focus_sources(question: str, chunks: Sequence[Chunk]) -> list[Chunk]:
    """Each chunk cut to its focused text, in retrieval order (best first: a small model reads the
    start of a short context most, and the first source is then also source [1]). A chunk none of
    whose sentences shares a word with the question is dropped when another one does: the best
    retrieved chunk is always kept."""
    weights = idf_weights(question, [c.text for c in chunks])
    focused = [(chunk, focus(chunk.text, weights)) for chunk in chunks]
    return [
        replace(chunk, text=f.text)
        for rank, (chunk, f) in enumerate(focused)
        if f.text and (rank == 0 or f.matched)
    ]
