"""Streams an answer word by word, each sentence closed by its verified source, once the reply is
known to be an answer: a reply that is only markers, headings or names, the question said back, or
the refusal sentence, is never shown as one.

Waiting for the first full sentence cost about half a second of the first text (a sentence is some
20 tokens, at 36 tokens/s for the 1.5B model on 2 cores). A sentence's words are shown as they come
once the first ones read as prose, except what attribution may still change: markers the model
wrote and the words they or punctuation could join (attribution removes markers and closes the
space before punctuation), URLs and credential-like values (replaced when no source holds them),
the last word and the end punctuation (where the sentence's sources are attached). The text shown
is always the start of the attributed answer: tests cut random replies into random pieces to check.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from raggity.pipeline.answer.attribution import (
    AttributedSentence,
    Attribution,
    attribute,
    attribute_sentence,
    reply_sentences,
)
from raggity.pipeline.answer.citations import content_words, without_markers
from raggity.pipeline.answer.injection import sensitive_spans
from raggity.pipeline.answer.prompt import REFUSAL_OPENING, PromptSource
from raggity.pipeline.answer.shape import AnswerShape, adds_to, answer_shape

_SENTENCE_END = (".", "!", "?")
# A word followed by the space after it: only such words are complete.
_COMPLETE_WORD = re.compile(r"\S+\s+")
# Settled words needed before a reply can read as prose.
_PROSE_WORDS = 3
# The start of markers the model is still writing after a full stop ("France. [" before "1]"):
# attribution's sentence split will give them to the sentence before.
_UNFINISHED_MARKERS = re.compile(r"(?:\[\d+\]\s*)*\[\d*")


@dataclass(frozen=True)
class StreamResult:
    raw: str  # what the model wrote
    shape: AnswerShape
    refused: bool  # the model wrote the fixed refusal sentence (unasked: the answer prompt offers none)
    shown: bool  # some of it was already passed to the caller
    attribution: Attribution


def _plain(text: str) -> str:
    """`text` as the refusal is compared: lowercase, without markers, quotes or repeated spaces."""
    return " ".join(without_markers(text).strip(" \t\n\"'“”‘’").lower().split())


def _is_refusal(text: str) -> bool:
    return _plain(text).startswith(_plain(REFUSAL_OPENING))


def _may_become_refusal(text: str) -> bool:
    return _plain(REFUSAL_OPENING).startswith(_plain(text)) or _is_refusal(text)


def settled_prefix(sentence: str) -> str:
    """The start of an unfinished sentence that attribution will leave as it is, whatever follows:
    its complete words but the last (where sources are attached), held back before
    - a word with a marker in it, and the word before it (a marker takes the space before it, so
      that word can become the sentence's closing punctuation, which its sources go before), and
    - a URL or credential-like value (a credential's label comes before its value, so a value is
      always found here with its label)."""
    words = _COMPLETE_WORD.findall(sentence)
    keep = min(len(words) - 1, next((i for i, word in enumerate(words) if "[" in word), len(words)))
    if keep > 0 and words[keep][:1] == "[":
        keep -= 1
    text = "".join(words[:keep])
    spans = sensitive_spans(text)
    return (text[: spans[0][0]] if spans else text).rstrip()


def _split(reply: str) -> tuple[list[tuple[str, str]], str]:
    """The reply's complete sentences (with the separator after each) and the one still growing,
    with a space at its end when its last word is complete (reply_sentences strips it)."""
    pieces = reply_sentences(reply)
    if not pieces:
        return [], ""
    complete, growing = pieces[:-1], pieces[-1][0]
    if complete and complete[-1][1] == " " and _UNFINISHED_MARKERS.fullmatch(growing):
        complete, growing = complete[:-1], f"{complete[-1][0]} {growing}"
    return complete, growing + " " if reply[-1:].isspace() else growing


def _reads_as_prose(reply: str, start: str, headings: Sequence[str]) -> bool:
    """Whether a reply whose settled text so far is `start` can only be prose: it opens with a
    letter or digit (no bullet, heading mark or marker), `start` has a lowercase content word (a verb
    or a common noun: names and titles are capitalised) among at least _PROSE_WORDS words, and it is
    not the start of a source's heading."""
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
        asked: frozenset[str] = frozenset(),
        headings: Sequence[str] = (),
        emit: Callable[[str], None] | None = None,
    ) -> None:
        """`given`: words that count as no evidence (attribution.attribute); `asked`: the question's
        words a reply must add to (shape.answer_shape: "restated")."""
        self._sources = list(sources)
        self._given = given
        self._asked = asked
        self._headings = tuple(headings)
        self._emit = emit
        self._raw = ""
        self._released = False
        self._shown = ""  # all that `emit` received
        self._attributed: dict[str, AttributedSentence] = {}

    def feed(self, piece: str) -> None:
        self._raw += piece
        complete, growing = _split(self._raw)
        if not self._released:
            if _may_become_refusal(self._raw):
                return
            if complete and (
                not any(s.endswith(_SENTENCE_END) for s, _ in complete)
                # Their form only: whether the reply adds to the question is asked of all that
                # is settled (below), so a word that adds shows it before its sentence ends.
                or answer_shape("".join(s + sep for s, sep in complete), self._headings) != "prose"
            ):
                return
            start = "".join(without_markers(s) + sep for s, sep in complete) + settled_prefix(growing)
            if not _reads_as_prose(self._raw, start.strip(), self._headings) or not adds_to(
                start, self._asked
            ):
                return
            self._released = True
        attributed = (self._sentence(s).text + sep for s, sep in complete)
        self._show(("".join(attributed) + settled_prefix(growing)).strip())

    def _sentence(self, sentence: str) -> AttributedSentence:
        if sentence not in self._attributed:
            self._attributed[sentence] = attribute_sentence(sentence, self._sources, self._given)
        return self._attributed[sentence]

    def _show(self, text: str) -> None:
        """Sends what `text` adds to what was shown (settled_prefix's rules make every later text
        start with what was shown; a text that does not is not sent)."""
        if len(text) > len(self._shown) and text.startswith(self._shown):
            self._send(text[len(self._shown) :])
            self._shown = text

    def _send(self, text: str) -> None:
        if self._emit is not None:
            self._emit(text)

    def finish(self) -> StreamResult:
        raw = self._raw.strip()
        shape = answer_shape(raw, self._headings, self._asked)
        refused = _is_refusal(raw)
        if not self._released and shape == "prose" and not refused:
            self._released = True
        attribution = attribute(self._raw if self._released else "", self._sources, self._given)
        if attribution.text.startswith(self._shown):
            self._show(attribution.text)
        else:  # a guard, not a path: should a rule above break, the answer is restated, not garbled
            self._send("\n" + attribution.text)
            self._shown = attribution.text
        return StreamResult(raw, shape, refused and not self._shown, bool(self._shown), attribution)
