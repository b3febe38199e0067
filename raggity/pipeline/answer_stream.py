"""Streams an answer sentence by sentence, each with its verified source, once the reply is known
to be an answer: a reply that is only markers, headings or names, or the refusal sentence, is never
shown as one."""

from __future__ import annotations

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
from raggity.pipeline.prompt import REFUSAL_OPENING, PromptSource

_SENTENCE_END = (".", "!", "?")


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


class AttributedStream:
    """Feed it the model's pieces; it calls `emit` with attributed sentences once the first complete
    sentence reads as prose (and is not the refusal), and afterwards with each sentence as it ends."""

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

    def feed(self, piece: str) -> None:
        self._raw += piece
        pieces = split_sentences(self._raw)[:-1]  # the last one may still be growing
        if not self._released:
            complete = "".join(s + sep for s, sep in pieces)
            if _may_become_refusal(self._raw) or not any(s.endswith(_SENTENCE_END) for s, _ in pieces):
                return
            if answer_shape(complete, self._headings) != "prose":
                return
            self._released = True
        self._take(pieces)

    def _take(self, pieces: Sequence[tuple[str, str]]) -> None:
        for sentence, separator in pieces[len(self._done) :]:
            attributed = attribute_sentence(sentence, self._sources, self._given)
            if self._emit is not None:
                before = self._done[-1][1] if self._done else ""
                self._emit(before + attributed.text)
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
