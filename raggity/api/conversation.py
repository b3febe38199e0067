"""A multi-turn conversation over the index: history persists, sources are fetched fresh each turn."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from raggity.api.history import Exchange, HistoryGenerator, bounded
from raggity.api.session import Raggity
from raggity.core.errors import RaggityError
from raggity.core.quoting import neutralise
from raggity.core.trace import OnStage, Staged, TraceRecorder
from raggity.core.types import Answer, Candidate
from raggity.pipeline.answer.budget import PROMPT_OVERHEAD, room_for_sources
from raggity.retrieval.selection import select_candidates

# Of the context left after the answer and the prompt's own overhead, history may use this share;
# the rest stays for the current turn's sources.
HISTORY_SHARE = 0.5
# The rewrite sees only the last few exchanges: a follow-up refers to what was just said.
REWRITE_EXCHANGES = 3
REWRITE_MAX_TOKENS = 96

REWRITE_SYSTEM = (
    "Rewrite the user's follow-up message as one standalone question that can be understood without "
    "the conversation: replace pronouns and references with the names they stand for. Do not answer it. "
    'Reply with JSON: {"question": "..."}.'
)
REWRITE_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"question": {"type": "string", "minLength": 1, "maxLength": 400}},
    "required": ["question"],
}


@dataclass(frozen=True)
class Turn:
    """One turn: what the user wrote, the standalone question it was rewritten to (and retrieved
    for), the answer, and the sources the answer was given (none when it abstained)."""

    text: str
    question: str
    answer: Answer
    sources: tuple[Candidate, ...] = ()


class Conversation:
    """`turn(text)` answers one message in the context of the previous ones.

    Each turn rewrites a follow-up into a standalone question (one short JSON-constrained model
    call, skipped on the first turn; the trace's `rewrite` stage shows it), retrieves fresh
    sources for that question, and answers through the same path as `Raggity.ask`, with the
    history (user and assistant text only, never sources) between the system prompt and this
    turn's request. History is bounded by the model's context: the oldest exchanges are dropped
    first. A turn whose sources cannot be read (the index locked mid-rebuild, a read error) raises
    the error, as `Raggity.ask` does, and leaves the conversation as it was: a turn is never answered
    from nothing. The answer cache is not used: an answer depends on the history, which its key does
    not cover.
    """

    def __init__(self, session: Raggity) -> None:
        # Opening the index first makes a chat with no index (or one that cannot be read) fail at the
        # start, as `rag ask` does, instead of after the first message.
        session.searcher.snapshot  # noqa: B018 - opened for its errors
        self._session = session
        self._model = HistoryGenerator(lambda: session.models.generator, session.models.generator_identity)
        self._answering = session.with_generator(self._model)
        self._turns: list[Turn] = []

    @property
    def turns(self) -> tuple[Turn, ...]:
        return tuple(self._turns)

    def reset(self) -> None:
        self._turns.clear()

    def turn(
        self, text: str, on_token: Callable[[str], None] | None = None, on_stage: OnStage | None = None
    ) -> Turn:
        """Answers `text`; the turn joins the history only once its answer is complete, so an
        interrupted turn (Ctrl-C while streaming) leaves the conversation as it was."""
        if not text.strip():
            raise RaggityError("the message is empty", "type a question")
        # A message too long for the model is refused whatever retrieval finds: declined by retrieval
        # it got an abstention without the model, joined the history and overflowed every later turn.
        room_for_sources(
            text.strip(), self._session.models.generator, self._session.config.generation.max_tokens
        )
        trace = TraceRecorder(on_stage)
        history = [Exchange(t.text, t.answer.text) for t in self._turns]
        question = text.strip()
        if history:
            question = trace.run("rewrite", 1, lambda: self._rewrite(question, history))
            history = trace.run("history", len(history), lambda: self._bounded(history))
        self._model.set_history(history)
        session = self._answering
        options = session.searcher.transform_options()
        candidates = session.searcher.retrieve(question, trace, transforms=options, use_cache=False)
        answer = session.answer(question, candidates, trace, on_token=on_token, use_cache=False)
        done = Turn(text, question, answer, () if answer.abstained else self._given(candidates))
        self._turns.append(done)
        return done

    def _given(self, candidates: list[Candidate]) -> tuple[Candidate, ...]:
        r = self._session.config.retrieval
        return tuple(select_candidates(candidates, r.top_k, r.relevance_floor))

    def _rewrite(self, text: str, history: list[Exchange]) -> Staged[str]:
        model = self._session.models.generator
        # Bounded by tokens as the answer's history is: one over-long exchange (a pasted log that
        # retrieval declined, so the model never refused it) otherwise overflowed every later rewrite,
        # and as failed turns never join the history, it stayed among the last exchanges for good.
        budget = (
            model.context_size
            - REWRITE_MAX_TOKENS
            - PROMPT_OVERHEAD
            - model.count_tokens(REWRITE_SYSTEM)
            - model.count_tokens(text)
        )
        recent = bounded(history[-REWRITE_EXCHANGES:], model.count_tokens, budget)
        if not recent:
            # Nothing of the conversation fits beside the message: it is searched for as written.
            return Staged(
                text, 1, {"question": text, "from": text, "fallback": True, "dropped": len(history)}
            )
        lines = [
            f"{role}: {m['content']}"
            for e in recent
            for role, m in zip(("User", "Assistant"), e.messages(), strict=True)
        ]
        prompt = "Conversation:\n" + "\n".join(lines) + f"\n\nFollow-up: {neutralise(text)}"
        raw = "".join(
            model.stream(
                [{"role": "system", "content": REWRITE_SYSTEM}, {"role": "user", "content": prompt}],
                max_tokens=REWRITE_MAX_TOKENS,
                temperature=0.0,
                json_schema=REWRITE_SCHEMA,
            )
        )
        rewritten = _parsed_question(raw)
        return Staged(
            rewritten or text, 1, {"question": rewritten or text, "from": text, "fallback": not rewritten}
        )

    def _bounded(self, history: list[Exchange]) -> Staged[list[Exchange]]:
        model = self._session.models.generator
        g = self._session.config.generation
        budget = int((model.context_size - g.max_tokens - PROMPT_OVERHEAD) * HISTORY_SHARE)
        kept = bounded(history, model.count_tokens, budget)
        return Staged(kept, len(kept), {"budget_tokens": budget, "dropped": len(history) - len(kept)})


def _parsed_question(raw: str) -> str:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return ""
    question = data.get("question") if isinstance(data, dict) else None
    return " ".join(question.split()) if isinstance(question, str) else ""
