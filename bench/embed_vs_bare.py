"""The embedding stage against a bare onnxruntime loop, on the same texts in the same groups.

Fair by construction: both start from the same chunk texts, cut into the groups the ingest embeds
(BATCH_CHUNKS at a time, in index order), on sessions made with the same options, and both are
timed from text to model output (tokenizing included: neither can skip it). They alternate group by
group, and which one goes first alternates too, so that load from other processes on a shared
machine falls on both alike.

The bare loop is the straightforward use of onnxruntime: tokenize, sort by length, fixed batches of
`batch_size`, pad to each batch's longest, run. It does not pool or normalise; the embedder does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from raggity.config.schema import Config, EmbeddingConfig
from raggity.inference.onnx_session import create_session
from raggity.inference.tokenizer import load_hf_tokenizer
from raggity.models.registry import resolve_embedder
from raggity.pipeline.ingest.reading import BATCH_CHUNKS
from raggity.pipeline.model_loading import load_embedder
from raggity.store.vector_table import VectorTableReader


class BareLoop:
    def __init__(self, cfg: EmbeddingConfig, base_dir: Path) -> None:
        files = resolve_embedder(cfg, base_dir)
        self._tokenizer = load_hf_tokenizer(files.tokenizer, cfg.max_tokens)
        self._session = create_session(files.onnx, cfg.threads)
        self._batch_size = cfg.batch_size
        self.run_seconds = 0.0  # inside session.run alone, for the record

    def __call__(self, texts: Sequence[str]) -> None:
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self._batch_size):
            rows = [encodings[i].ids for i in order[start : start + self._batch_size]]
            width = max(len(row) for row in rows)
            ids = np.array([row + [0] * (width - len(row)) for row in rows], dtype=np.int64)
            mask = (np.arange(width)[None, :] < np.array([len(row) for row in rows])[:, None]).astype(
                np.int64
            )
            began = time.perf_counter()
            self._session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(mask)}
            )
            self.run_seconds += time.perf_counter() - began


def indexed_texts(index: Path) -> list[str]:
    """What the ingest embedded, in the order it embedded it (rows are appended batch by batch)."""
    reader = VectorTableReader(index / "lancedb" / "chunks.lance")
    ids = reader.all_ids()
    rows: dict[str, Any] = {}
    for start in range(0, len(ids), 2000):
        rows.update(reader.fetch(ids[start : start + 2000]))
    return [rows[i].chunk.search_text for i in ids]


def compare(texts: Sequence[str], base_dir: Path, *, group: int = BATCH_CHUNKS) -> dict[str, float]:
    config = Config()
    embedder = load_embedder(config)
    bare = BareLoop(config.embedding, base_dir)
    warm = list(texts[:64])
    embedder.embed(warm)
    bare(warm)
    bare.run_seconds = 0.0
    seconds = {"embed": 0.0, "bare": 0.0}
    calls: dict[str, Callable[[Sequence[str]], object]] = {"embed": embedder.embed, "bare": bare}
    for k, start in enumerate(range(0, len(texts), group)):
        chunk = texts[start : start + group]
        for name in ("embed", "bare") if k % 2 == 0 else ("bare", "embed"):
            began = time.perf_counter()
            calls[name](chunk)
            seconds[name] += time.perf_counter() - began
    return {
        "texts": float(len(texts)),
        "embed_seconds": seconds["embed"],
        "bare_onnx_seconds": seconds["bare"],
        "bare_onnx_run_only_seconds": bare.run_seconds,
        "embed_vs_bare_ratio": seconds["bare"] / seconds["embed"],
    }
