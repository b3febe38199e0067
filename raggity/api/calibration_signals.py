"""The signals a calibration fits on, collected by the real ask pipeline with its thresholds off.

Each question is retrieved and judged as `rag ask` would (same retrieval, same prompts), with the
cosine floor at 0 and the thresholds off, so that every signal is read; the model generates nothing:
only the refusal probability is read from the judgement's prompts. The answer prompt offers no
refusal, so the rates fitted on these signals are the rates `rag ask` declines at, apart from rare
replies that are no answer (docs/answers.md). A corpus calibration also generates the answers to the
questions it wrote (answer_row), to learn which of them the model gets wrong.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from raggity.api.session import Raggity
from raggity.core.protocols import Generator
from raggity.core.trace import TraceRecorder
from raggity.pipeline.answer.answerability import Thresholds

OFF = Thresholds(min_coverage=0.0, max_refusal_probability=1.0)


class SignalsOnly:
    """The real generator for the refusal probability; generates nothing after it."""

    def __init__(self, inner: Generator) -> None:
        self._inner = inner

    @property
    def identity(self) -> str:
        return self._inner.identity

    @property
    def context_size(self) -> int:
        return self._inner.context_size

    def count_tokens(self, text: str) -> int:
        return self._inner.count_tokens(text)

    def continuation_probability(
        self, messages: Sequence[dict[str, str]], text: str, *, fresh: bool = False
    ) -> float:
        return self._inner.continuation_probability(messages, text, fresh=fresh)

    def stream(self, messages: Sequence[dict[str, str]], **_: object) -> Iterator[str]:
        return iter(())


def signals_session(session: Raggity) -> Raggity:
    """`session`, answering through SignalsOnly: the judgement is read, nothing is generated."""
    return session.with_generator(SignalsOnly(session.models.generator))


def signal_row(session: Raggity, question: str, *, without_source: str | None = None) -> dict[str, Any]:
    """The signals of one question, as a row of a signal log (`session`: see signals_session).
    `without_source`: that file's chunks are taken out of the candidates, so the question is judged
    on sources that do not hold its answer (a corpus calibration's questions to decline)."""
    trace = TraceRecorder()
    candidates = session.searcher.retrieve(question, trace)
    if without_source is not None:
        candidates = [c for c in candidates if c.chunk.source != without_source]
    settings = replace(session.settings(), sufficiency_floor=0.0, answerability=OFF)
    answer = session.answer(question, candidates, trace, settings=settings, use_cache=False)
    detail = {t.stage: t.detail for t in answer.trace}
    judgement = detail.get("model-judgement", {})
    return {
        "question": question,
        "best_cosine": detail["abstain"]["best_cosine"],
        "coverage": detail.get("coverage", {}).get("coverage", 0.0),
        "refusal_probability": judgement.get("refusal_probability"),
        # Its two readings, kept to show what each tells apart on its own (docs/answers.md).
        "refusal_opening": judgement.get("refusal_opening"),
        "yes_no": judgement.get("yes_no"),
        "sources": [c.chunk.source for c in candidates[: settings.top_k]],
        "chunks": [c.chunk.id for c in candidates[: settings.top_k]],
    }


def answer_row(session: Raggity, question: str) -> dict[str, Any]:
    """The answer `rag ask` gives when its thresholds let the question through, as a log row: its
    text, whether the answer's own checks declined it, and whether it is shown as verified. The
    answer does not depend on the thresholds (they only decide whether it is given), so one row
    serves every pair a calibration or a benchmark tries. `session`: the real generator."""
    trace = TraceRecorder()
    candidates = session.searcher.retrieve(question, trace)
    settings = replace(session.settings(), sufficiency_floor=0.0, answerability=OFF)
    answer = session.answer(question, candidates, trace, settings=settings, use_cache=False)
    return {
        "question": question,
        "text": answer.text,
        "declined": answer.declined,
        "verified": answer.verified,
    }
