"""OnnxEmbedder with the packaged embedding model: batches by length, vectors independent of batching."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from raggity.config.schema import EmbeddingConfig
from raggity.inference.embedder import OnnxEmbedder
from raggity.models.registry import resolve_embedder

SHORT = [f"note {k}" for k in range(6)]
LONG = [" ".join(f"paragraph {k} sentence {n} about retrieval." for n in range(40)) for k in range(6)]


class RecordingSession:
    """Wraps the real ONNX Runtime session and keeps the input shape of every run."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.shapes: list[tuple[int, int]] = []

    def get_inputs(self) -> Any:
        return self.inner.get_inputs()

    def get_outputs(self) -> Any:
        return self.inner.get_outputs()

    def run(self, outputs: Any, feeds: dict[str, np.ndarray[Any, Any]]) -> Any:
        rows, width = feeds["input_ids"].shape
        self.shapes.append((int(rows), int(width)))
        return self.inner.run(outputs, feeds)


@pytest.fixture(scope="module")
def model_files(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return resolve_embedder(EmbeddingConfig(), tmp_path_factory.mktemp("base"))


def embedder(model_files: Any, **options: Any) -> tuple[OnnxEmbedder, RecordingSession]:
    sessions: list[RecordingSession] = []

    def record(inner: Any) -> RecordingSession:
        sessions.append(RecordingSession(inner))
        return sessions[-1]

    model = OnnxEmbedder(
        model_files.onnx, model_files.tokenizer, identity="test", max_tokens=320, session=record, **options
    )
    return model, sessions[0]


def test_short_texts_are_not_padded_to_the_longest_text_of_the_call(model_files: Any) -> None:
    model, session = embedder(model_files, batch_size=6)
    mixed = [text for pair in zip(LONG, SHORT, strict=True) for text in pair]
    model.embed(mixed)
    assert len(session.shapes) == 2
    (short_rows, short_width), (long_rows, long_width) = session.shapes
    assert (short_rows, long_rows) == (6, 6)
    assert short_width <= 6 < long_width


def test_calls_stay_within_the_token_budget(model_files: Any) -> None:
    model, session = embedder(model_files, batch_size=32, batch_tokens=1024)
    model.embed(LONG * 3)
    assert len(session.shapes) > 1
    assert all(rows * width <= 1024 for rows, width in session.shapes)


def test_vectors_do_not_depend_on_what_else_is_in_the_call(model_files: Any) -> None:
    model, _ = embedder(model_files, batch_size=4)
    texts = [text for pair in zip(LONG, SHORT, strict=True) for text in pair]
    together = model.embed(texts)
    alone = np.vstack([model.embed([text]) for text in texts])
    assert together.shape == (len(texts), model.dim)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert float((together * alone).sum(axis=1).min()) >= 0.9999
    # Each text's vector is its own: the order of rows follows the input, not the batches.
    assert float(together[0] @ together[1]) < 0.9
