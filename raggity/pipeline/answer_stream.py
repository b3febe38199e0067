"""Streams an answer word by word, each sentence closed by its verified source, once the reply is
known to be an answer: a reply that is only markers, headings or names, or the refusal sentence, is
never shown as one.

Waiting for the first full sentence cost about half a second of the first text (a sentence is some
20 tokens, at 36 tokens/s for the 1.5B model on 2 cores). A sentence's words are shown as they come
once the first ones read as prose, except what attribution may still change: markers the model
wrote, URLs and credential-like values (replaced when no source holds them), the last word and the
end punctuation (where the sentence's sources are attached).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from raggity.pipeline.answer_shape import AnswerShape, answer_shape
from raggity.pipeline.attribution import (
    AttributedSentence,
    Attribution,
    assemble,
    attribute_sentence,
    split_sentences,
)
from raggity.pipeline.citations import content_words
from raggity.pipeline.injection import sensitive_spans
from raggity.pipeline.prompt import REFUSAL_OPENING, PromptSource

_SENTENCE_END = (".", "!", "?")
# A word followed by the space after it: only such words are complete.
_COMPLETE_WORD = re.compile(r"\S+\s+")
# Whitespace before punctuation, which attribution's marker removal also closes up.
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.!?,;:])")
# Words of an unfinished first sentence needed before it can read as prose.
_PROSE_WORDS = 3


@dataclass(frozen=True)
class StreamResult:
    raw: str  # what the model wrote
    shape: AnswerShape
    refused: bool  # the model wrote the fixed refusal sentence (unasked: the answer prompt offers none)
    shown: bool  # some of it was already passed to the caller
    attribution: Attribution


def _is_refusal(text: str) -> bool:
    head, opening = text.strip().lower(), REFUSAL_OPENING.lower()
    return head.startswith(opening)


def _may_become_refusal(text: str) -> bool:
    head = text.strip().lower()
    return REFUSAL_OPENING.lower().startswith(head) or _is_refusal(head)


def settled_prefix(sentence: str) -> str:
    """The start of an unfinished sentence that attribution will leave as it is, whatever follows:
    its complete words but the last (where sources are attached), up to the first marker, URL or
    credential-like value, without the spaces and punctuation at its end. A credential's label comes
    before its value, so a value is always found here with its label."""
    text = "".join(_COMPLETE_WORD.findall(sentence)[:-1])
    marker = text.find("[")
    cuts = [len(text) if marker < 0 else marker, *(start for start, _ in sensitive_spans(text)[:1])]
    return re.sub(r"[\s.!?:;,]+$", "", _SPACE_BEFORE_PUNCTUATION.sub(r"\1", text[: min(cuts)]))


def _reads_as_prose(reply: str, start: str, headings: Sequence[str]) -> bool:
    """Whether an unfinished first sentence can only be prose: it opens with a letter or digit (no
    bullet, heading mark or marker), and `start`, its settled words, has a lowercase content word (a
    verb or a common noun: names and titles are capitalised) among at least _PROSE_WORDS words, and
    is not the start of a source's heading."""
    if not reply.lstrip()[:1].isalnum() or len(start.split()) < _PROSE_WORDS:
        return False
    if not content_words(" ".join(re.findall(r"(?<![\w-])[a-z]+(?![\w-])", start))):
        return False
    known = (h.strip().lower() for heading in headings for h in heading.split(" > "))
    return not any(h.startswith(start.lower()) for h in known)


class AttributedStream:
    """Feed it the model's pieces; it calls `emit` with the answer's text once the reply reads as
    prose (and is not the refusal): settled words as they come, and each sentence's end with its
    sources when it ends. What `emit` received, joined, is the attributed answer's text."""

    def __init__(
        self,
        sources: Sequence[PromptSource],
        *,
        given: frozenset[str] = frozenset(),
        headings: Sequence[str] = (),
        emit: Callable[[str], None] | None = None,
    ) -> None:
        self._sources = list(sources)
        self._given = given
        self._headings = tuple(headings)
        self._emit = emit
        self._raw = ""
        self._done: list[tuple[AttributedSentence, str]] = []
        self._released = False
        self._shown = ""  # of the unfinished sentence

    def feed(self, piece: str) -> None:
        self._raw += piece
        pieces = split_sentences(self._raw)
        complete, growing = pieces[:-1], pieces[-1][0] if pieces else ""  # the last may still grow
        if self._raw[-1:].isspace():
            growing += " "  # its last word is complete (split_sentences strips the space)
        if not self._released:
            if _may_become_refusal(self._raw):
                return
            if complete:
                text = "".join(s + sep for s, sep in complete)
                if not any(s.endswith(_SENTENCE_END) for s, _ in complete):
                    return
                if answer_shape(text, self._headings) != "prose":
                    return
            elif not _reads_as_prose(self._raw, settled_prefix(growing), self._headings):
                return
            self._released = True
        self._take(complete)
        self._show(settled_prefix(growing))

    def _show(self, settled: str) -> None:
        if len(settled) <= len(self._shown):
            return
        before = "" if self._shown else self._separator()
        self._send(before + settled[len(self._shown) :])
        self._shown = settled

    def _separator(self) -> str:
        return self._done[-1][1] if self._done else ""

    def _send(self, text: str) -> None:
        if self._emit is not None and text:
            self._emit(text)

    def _take(self, pieces: Sequence[tuple[str, str]]) -> None:
        for sentence, separator in pieces[len(self._done) :]:
            attributed = attribute_sentence(sentence, self._sources, self._given)
            # settled_prefix guarantees that attribution kept what was shown of it.
            shown, self._shown = self._shown, ""
            self._send(attributed.text[len(shown) :] if shown else self._separator() + attributed.text)
            self._done.append((attributed, separator))

    def finish(self) -> StreamResult:
        raw = self._raw.strip()
        shape = answer_shape(raw, self._headings)
        refused = _is_refusal(raw)
        if not self._released and shape == "prose" and not refused:
            self._released = True
        if self._released:
            self._take(split_sentences(self._raw))
        attribution = assemble([a for a, _ in self._done], [sep for _, sep in self._done], self._sources)
        return StreamResult(raw, shape, refused and not self._done, bool(self._done), attribution)
