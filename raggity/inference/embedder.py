"""Bi-encoder embeddings from an ONNX transformer: mean pooling and L2 normalisation done here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from raggity.core.protocols import Vectors
from raggity.inference.batching import BatchLimits, plan_batches
from raggity.inference.onnx_session import create_session
from raggity.inference.tokenizer import load_hf_tokenizer

# Padded tokens per ONNX call. Once batches are length-sorted, 1,024 to 16,384 run at the same speed
# (SciFact chunks, 2 cores, interleaved); the attention buffers grow with rows x width^2, so the budget
# sets the model's working memory: peak RSS 620 MB at 4,096, 420 MB at 2,048 (embedder alone).
BATCH_TOKENS = 2048


class OnnxEmbedder:
    """Embeds texts in length-sorted batches under a token budget, so padding stays small."""

    def __init__(
        self,
        model: Path,
        tokenizer: Path,
        *,
        identity: str,
        max_tokens: int = 256,
        batch_size: int = 32,
        threads: int = 0,
        providers: Sequence[str] = (),
        batch_tokens: int = BATCH_TOKENS,
        session: Callable[[Any], Any] | None = None,
    ) -> None:
        """`session` wraps the ONNX Runtime session once it is created (tests record its runs)."""
        self._tokenizer = load_hf_tokenizer(tokenizer, max_tokens)
        created = create_session(model, threads, providers)
        # Where the model runs, as ONNX Runtime set it up (`rag doctor` and `rag status` show it).
        self.providers: list[str] = list(created.get_providers())
        self._session = created if session is None else session(created)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._limits = BatchLimits(rows=batch_size, tokens=max(batch_tokens, max_tokens))
        self._identity = identity
        self._dim = int(self._session.get_outputs()[0].shape[-1])

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def identity(self) -> str:
        return self._identity

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        # Unpadded: each batch is padded to its own longest text below.
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = [encoding.ids for encoding in encodings]
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        for batch in plan_batches([len(row) for row in ids], self._limits):
            out[batch] = self._run([ids[i] for i in batch])
        return out

    def _run(self, rows: list[list[int]]) -> Vectors:
        width = max(len(row) for row in rows)
        input_ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, row in enumerate(rows):
            input_ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(mask)
        hidden: Vectors = self._session.run(None, feeds)[0]
        # Mean over real tokens as one matrix product per row: [1, width] @ [width, dim].
        weights = mask.astype(np.float32)[:, None, :]
        pooled = np.matmul(weights, hidden)[:, 0, :] / np.maximum(weights.sum(axis=2), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: Vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return normalised
