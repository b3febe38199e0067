"""The seams between layers: one small method each, so that test doubles stay trivial."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from raggity.core.types import Candidate, Query

# Unit vectors: one per row of a float32 [n, dim] array, or a single [dim] query vector.
Vectors = npt.NDArray[np.float32]
Vector = Vectors
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


class Generator(Protocol):
    """A local chat model. `stream` yields text pieces as they are decoded."""

    @property
    def identity(self) -> str: ...

    def stream(
        self,
        messages: Sequence[dict[str, str]],
        *,
        max_tokens: int,
        temperature: float,
        json_schema: dict[str, object] | None = None,
    ) -> Iterator[str]: ...
