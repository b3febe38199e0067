"""A conversation's history as chat messages: bounded by the model's context, and put into the
answer prompt by a generator wrapper so the ask pipeline itself needs no change."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from raggity.core.protocols import Generator
from raggity.core.quoting import neutralise

Message = dict[str, str]

# Per-message tokens of the chat template around the content (role markers, separators).
_TEMPLATE_TOKENS = 8
# A stored answer keeps its words, not its [n] markers: the numbers pointed at that turn's sources,
# which later turns never see, and a small model would copy them as if they were citations.
_CITATION_MARK = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")


@dataclass(frozen=True)
class Exchange:
    """One user message and the reply to it, as history keeps them (never with sources)."""

    user: str
    assistant: str

    def messages(self) -> list[Message]:
        return [
            {"role": "user", "content": neutralise(self.user.strip())},
            {"role": "assistant", "content": neutralise(_CITATION_MARK.sub("", self.assistant).strip())},
        ]


def bounded(exchanges: Sequence[Exchange], count_tokens: Callable[[str], int], budget: int) -> list[Exchange]:
    """The most recent exchanges whose messages fit in `budget` tokens; older ones are dropped."""
    kept: list[Exchange] = []
    used = 0
    for exchange in reversed(exchanges):
        cost = sum(count_tokens(m["content"]) + _TEMPLATE_TOKENS for m in exchange.messages())
        if used + cost > budget:
            break
        kept.insert(0, exchange)
        used += cost
    return kept


def history_tokens(exchanges: Sequence[Exchange], count_tokens: Callable[[str], int]) -> int:
    return sum(count_tokens(m["content"]) + _TEMPLATE_TOKENS for e in exchanges for m in e.messages())


class HistoryGenerator:
    """A Generator that inserts `history` between the system message and the current request.

    The ask pipeline builds [system, user-with-this-turn's-sources] and fits the sources into
    `context_size`; this wrapper reports the model's context minus the history's tokens, so the
    sources are fitted around the history and the current turn's sources are never cut for it.
    The sources stay in that one request: history holds only the exchanges' plain text.
    """

    def __init__(self, load: Callable[[], Generator], identity: str) -> None:
        self._load = load
        self.identity = identity
        self._history: list[Message] = []
        self._history_tokens = 0

    def set_history(self, exchanges: Sequence[Exchange]) -> None:
        self._history = [m for e in exchanges for m in e.messages()]
        self._history_tokens = history_tokens(exchanges, self.count_tokens) if exchanges else 0

    @property
    def context_size(self) -> int:
        return self._load().context_size - self._history_tokens

    def count_tokens(self, text: str) -> int:
        return self._load().count_tokens(text)

    def _with_history(self, messages: Sequence[Message]) -> list[Message]:
        n = next((i for i, m in enumerate(messages) if m["role"] != "system"), len(messages))
        return [*messages[:n], *self._history, *messages[n:]]

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        json_schema: dict[str, object] | None = None,
    ) -> Iterator[str]:
        yield from self._load().stream(
            self._with_history(messages),
            max_tokens=max_tokens,
            temperature=temperature,
            json_schema=json_schema,
        )

    def continuation_probability(
        self, messages: Sequence[Message], text: str, *, fresh: bool = False
    ) -> float:
        """The judgement reads the same prompt the answer is written from, history included: chat
        declines what ask declines, and the judged prompt stays in the model's cache for the answer."""
        return self._load().continuation_probability(self._with_history(messages), text, fresh=fresh)
