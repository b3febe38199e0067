"""The seams between layers: one small method each, so that test doubles stay trivial."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from raggity.core.types import Candidate, Query
from raggity.core.vectors import Vector, Vectors

# Vector and Vectors live in core/vectors.py (so that core/types.py need not import this module);
# they are still importable from here.
__all__ = [
    "EmbedTexts",
    "Embedder",
    "Generator",
    "Messages",
    "Retriever",
    "Scorer",
    "Tokenizer",
    "Vector",
    "Vectors",
]

# The one embedding signature every consumer takes (Embedder.embed is one): texts in, unit rows out.
EmbedTexts = Callable[[Sequence[str]], Vectors]


class Tokenizer(Protocol):
    """Splits text into model tokens; chunking counts with the embedder's own tokenizer."""

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span of every token of `text`, special tokens excluded."""
        ...


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors (rows of a float32 [n, dim] array)."""

    @property
    def dim(self) -> int: ...

    @property
    def identity(self) -> str:
        """Changes whenever vectors would change (model hash, max length)."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


class Scorer(Protocol):
    """Scores how well each passage answers the query; higher is better, scale in [0, 1]."""

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


class Retriever(Protocol):
    """Read-only ranked search: one query in, candidates out, best first.

    Options (how many, which lists, which stages) are fixed at construction. An empty list is a
    valid answer, not an error. Each implementation documents the scale of `Candidate.score`.
    Leaves (dense, BM25, graph) and composites (hybrid, decomposed) satisfy the same contract.
    """

    def retrieve(self, query: Query) -> list[Candidate]: ...


# One chat message: {"role": "system" | "user" | "assistant", "content": text}.
Messages = Sequence[dict[str, str]]


class Generator(Protocol):
    """A local chat model: the one generator contract, in one place.

    Every member is required, the judgement included: a wrapper (chat's history, a recording test
    double) that forgets `continuation_probability` fails type-checking where it is handed to the
    pipeline, instead of silently skipping the model's judgement at run time. `raggity.testing` ships
    doubles that fulfil the whole contract, and tests/test_contracts.py runs every implementation
    through one conformance test.
    """

    @property
    def identity(self) -> str:
        """Changes whenever replies would change (model hash, prompt-affecting settings)."""
        ...

    @property
    def context_size(self) -> int:
        """Tokens the model reads and writes in one call: the prompt plus the reply."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens `text` takes in a prompt."""
        ...

    def stream(
        self,
        messages: Messages,
        *,
        max_tokens: int,
        temperature: float,
        json_schema: dict[str, object] | None = None,
    ) -> Iterator[str]:
        """The reply to `messages`, as text pieces while they are decoded."""
        ...

    def continuation_probability(self, messages: Messages, text: str, *, fresh: bool = False) -> float:
        """How likely the reply to `messages` starts with `text`, in [0, 1]. The model's judgement of
        whether its sources answer a question is read this way (pipeline/answer/answerability.py).
        `fresh`: read `messages` from their first token, whatever the model read before, so that the
        same prompt gets the same probability in every process (a model that reuses what it read
        before may round differently where its reading resumes)."""
        ...
