"""Doubles for the model seams, shipped beside the contracts they fulfil (as httpx ships
`MockTransport` beside its transport seam).

Each double fulfils the whole contract of its protocol in raggity/core/protocols.py, so mypy checks
it wherever it is handed in (`Raggity(config, generator=ScriptedGenerator(...))`), and one
conformance test (tests/test_contracts.py) runs every implementation, real and double, through the
same checks. Use them for plumbing: what reaches the model, what the pipeline does with a reply.
What a model decides is tested against the real model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from raggity.core.protocols import Embedder, Generator, Messages, Vectors

__all__ = ["HashEmbedder", "RecordingEmbedder", "RecordingGenerator", "ScriptedGenerator", "never_refuses"]


def never_refuses(_: Messages, text: str) -> float:
    """A judgement that always finds the sources sufficient: "Yes" is certain, every other
    continuation (the refusal's opening, "No") impossible."""
    return 1.0 if text == "Yes" else 0.0


class ScriptedGenerator:
    """A generator whose reply to each prompt `script` writes, and whose judgement `judge` gives
    (the probability that the reply to `messages` starts with `text`; by default it never refuses).
    Every prompt streamed is kept in `calls` (with its JSON schema in `schemas`), every judged
    continuation in `judged`."""

    identity = "scripted-generator"
    context_size = 4096

    def __init__(
        self,
        script: Callable[[Messages], str],
        judge: Callable[[Messages, str], float] = never_refuses,
    ) -> None:
        self._script = script
        self._judge = judge
        self.calls: list[list[dict[str, str]]] = []
        self.schemas: list[dict[str, object] | None] = []
        self.judged: list[tuple[list[dict[str, str]], str]] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def stream(
        self,
        messages: Messages,
        *,
        max_tokens: int,
        temperature: float,
        json_schema: dict[str, object] | None = None,
    ) -> Iterator[str]:
        self.calls.append(list(messages))
        self.schemas.append(json_schema)
        yield from re.findall(r"\S+\s*", self._script(messages))

    def continuation_probability(self, messages: Messages, text: str, *, fresh: bool = False) -> float:
        self.judged.append((list(messages), text))
        return self._judge(messages, text)


class RecordingGenerator:
    """Wraps a generator, real or not: passes every call through and keeps each prompt (`calls`)
    and each whole reply (`replies`)."""

    def __init__(self, inner: Generator) -> None:
        self.inner = inner
        self.calls: list[list[dict[str, str]]] = []
        self.replies: list[str] = []

    @property
    def identity(self) -> str:
        return self.inner.identity

    @property
    def context_size(self) -> int:
        return self.inner.context_size

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def continuation_probability(self, messages: Messages, text: str, *, fresh: bool = False) -> float:
        return self.inner.continuation_probability(messages, text, fresh=fresh)

    def stream(
        self,
        messages: Messages,
        *,
        max_tokens: int,
        temperature: float,
        json_schema: dict[str, object] | None = None,
    ) -> Iterator[str]:
        self.calls.append(list(messages))
        pieces: list[str] = []
        for piece in self.inner.stream(
            messages, max_tokens=max_tokens, temperature=temperature, json_schema=json_schema
        ):
            pieces.append(piece)
            yield piece
        self.replies.append("".join(pieces))


class HashEmbedder:
    """Deterministic unit vectors from each text's hash: no meaning, so use it only where the
    pipeline's plumbing (or its memory) is measured, never its ranking."""

    identity = "hash-embedder"

    def __init__(self, dim: int = 384) -> None:
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        seeds = [
            int.from_bytes(hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest()[:8], "little")
            for t in texts
        ]
        rows = np.stack([np.random.default_rng(s).standard_normal(self._dim) for s in seeds])
        unit: Vectors = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
        return unit


class RecordingEmbedder:
    """Wraps an embedder, real or not, keeping every text it was asked to embed (`texts`)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.texts: list[str] = []

    @property
    def dim(self) -> int:
        return self._inner.dim

    @property
    def identity(self) -> str:
        return self._inner.identity

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        return self._inner.embed(texts)
