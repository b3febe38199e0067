"""Bi-encoder embeddings from an ONNX transformer: mean pooling and L2 normalisation done here."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from raggity.core.protocols import Vectors
from raggity.inference.onnx_session import create_session
from raggity.inference.tokenizer import load_hf_tokenizer


class OnnxEmbedder:
    """Embeds texts in length-sorted batches so that padding (wasted compute) stays small."""

    def __init__(
        self,
        model: Path,
        tokenizer: Path,
        *,
        identity: str,
        max_tokens: int = 256,
        batch_size: int = 32,
        threads: int = 0,
    ) -> None:
        self._tokenizer = load_hf_tokenizer(tokenizer, max_tokens)
        self._session = create_session(model, threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._batch_size = batch_size
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
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            batch = order[start : start + self._batch_size]
            out[batch] = self._run([encodings[i] for i in batch])
        return out

    def _run(self, encodings: list[object]) -> Vectors:
        # Encodings were padded to the longest of the whole call; trim each batch to its own longest.
        masks = np.array([e.attention_mask for e in encodings], dtype=np.int64)  # type: ignore[attr-defined]
        width = int(masks.sum(axis=1).max())
        masks = masks[:, :width]
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64)[:, :width],  # type: ignore[attr-defined]
            "attention_mask": masks,
        }
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(masks)
        hidden: Vectors = self._session.run(None, feeds)[0]
        weights = masks[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: Vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return normalised
