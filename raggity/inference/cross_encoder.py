"""ONNX cross-encoder reranker: scores (query, passage) pairs jointly with a BERT-style model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tokenizers import Encoding
from tokenizers import Tokenizer as HFTokenizerModel

from raggity.core.errors import ModelError
from raggity.inference.onnx_session import create_session

# Quantized first: on CPU the int8 export is several times faster at a negligible ranking cost.
_MODEL_CANDIDATES = ("onnx/model_quantized.onnx", "onnx/model.onnx", "model_quantized.onnx", "model.onnx")
_KNOWN_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})
_MIN_TOKENS = 8

Int64Array = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def find_cross_encoder_files(folder: Path) -> tuple[Path, Path]:
    """Returns (onnx model, tokenizer.json) of a model folder in the Xenova export layout.

    The quantized export is preferred over the fp32 one when both are present.
    """
    hint = "expected onnx/model.onnx (or model_quantized.onnx) and tokenizer.json, as in Xenova exports"
    if not folder.is_dir():
        raise ModelError(f"cross-encoder folder {folder} does not exist", hint)
    model = next((folder / name for name in _MODEL_CANDIDATES if (folder / name).is_file()), None)
    if model is None:
        raise ModelError(f"cross-encoder folder {folder} has no ONNX model", hint)
    tokenizer = folder / "tokenizer.json"
    if not tokenizer.is_file():
        raise ModelError(f"cross-encoder folder {folder} has no tokenizer.json", hint)
    return model, tokenizer


def _sigmoid(logits: FloatArray) -> FloatArray:
    # exp of a negative magnitude never overflows, whatever the sign of the logit.
    e = np.exp(-np.abs(logits))
    return np.where(logits >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


class OnnxCrossEncoder:
    """Reranker over a standard cross-encoder export; satisfies raggity.core.protocols.Scorer."""

    def __init__(
        self,
        folder: Path,
        *,
        max_tokens: int = 512,
        batch_size: int = 16,
        threads: int = 0,
        providers: Sequence[str] = (),
        session: Callable[[Any], Any] | None = None,
    ) -> None:
        """`session` wraps the ONNX Runtime session once it is created (tests record its runs)."""
        if max_tokens < _MIN_TOKENS:
            raise ValueError(f"max_tokens must be at least {_MIN_TOKENS}, got {max_tokens}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        model_path, tokenizer_path = find_cross_encoder_files(folder)
        self._max_tokens = max_tokens
        self._batch_size = batch_size
        self._plain, self._pairs, self._pad_id = _load_tokenizers(tokenizer_path, max_tokens)
        created = create_session(model_path, threads, providers)
        self.providers: list[str] = list(created.get_providers())
        self._session = created if session is None else session(created)
        self._inputs = _check_inputs(self._session, model_path)
        names = [output.name for output in self._session.get_outputs()]
        self._output = "logits" if "logits" in names else names[0]

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """sigmoid(logit) for each passage, in input order."""
        if not passages:
            return []
        query = self._clip_query(query)
        encodings = self._pairs.encode_batch([(query, passage) for passage in passages])
        # Length-sorted batches pad far less than batches in arrival order.
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        scores = np.empty(len(encodings), dtype=np.float64)
        for start in range(0, len(order), self._batch_size):
            indices = order[start : start + self._batch_size]
            scores[indices] = self._run([encodings[i] for i in indices])
        return [float(s) for s in _sigmoid(scores)]

    def _clip_query(self, query: str) -> str:
        # "only_second" truncation fails when the query alone overflows, so the query keeps at most
        # half the budget and the passage always has room.
        budget = self._max_tokens // 2
        offsets = self._plain.encode(query, add_special_tokens=False).offsets
        return query if len(offsets) <= budget else query[: offsets[budget - 1][1]]

    def _run(self, batch: Sequence[Encoding]) -> FloatArray:
        width = max(len(encoding.ids) for encoding in batch)
        ids = np.full((len(batch), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        types = np.zeros((len(batch), width), dtype=np.int64)
        for row, encoding in enumerate(batch):
            n = len(encoding.ids)
            ids[row, :n] = encoding.ids
            mask[row, :n] = 1
            types[row, :n] = encoding.type_ids
        available: dict[str, Int64Array] = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        feeds = {name: available[name] for name in self._inputs}
        try:
            (logits,) = self._session.run([self._output], feeds)
        except Exception as exc:  # onnxruntime raises its own unexported exception types
            raise ModelError(f"cross-encoder inference failed: {exc}") from exc
        return _logit_column(np.asarray(logits, dtype=np.float64), len(batch))


def _logit_column(logits: FloatArray, n: int) -> FloatArray:
    if logits.shape in ((n, 1), (n,)):
        return logits.reshape(n)
    raise ModelError(
        f"cross-encoder output has shape {list(logits.shape)}, expected [{n}, 1] or [{n}]",
        "use a single-logit relevance model such as ms-marco-MiniLM-L-6-v2",
    )


def _load_tokenizers(path: Path, max_tokens: int) -> tuple[HFTokenizerModel, HFTokenizerModel, int]:
    """(untruncated tokenizer for measuring queries, pair tokenizer, pad id).

    Padding is done per batch in numpy, so both tokenizers leave sequences unpadded.
    """
    try:
        loaded = HFTokenizerModel.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception on malformed files
        raise ModelError(
            f"{path}: cannot load tokenizer: {exc}", "use the model's own tokenizer.json"
        ) from exc
    padding = loaded.padding
    pad_id = padding["pad_id"] if padding else (loaded.token_to_id("[PAD]") or 0)
    plain = HFTokenizerModel.from_str(loaded.to_str())
    plain.no_truncation()
    plain.no_padding()
    pairs = HFTokenizerModel.from_str(loaded.to_str())
    pairs.no_padding()
    pairs.enable_truncation(max_tokens, strategy="only_second")
    return plain, pairs, int(pad_id)


def _check_inputs(session: Any, path: Path) -> tuple[str, ...]:
    names = tuple(str(node.name) for node in session.get_inputs())
    unknown = sorted(set(names) - _KNOWN_INPUTS)
    if unknown or "input_ids" not in names:
        raise ModelError(
            f"{path}: unsupported cross-encoder inputs {list(names)}",
            "expected input_ids, attention_mask and optionally token_type_ids",
        )
    return names
