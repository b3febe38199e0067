"""One conformance test per model seam, run over every implementation: the real model, every wrapper
the product uses (chat's history), and every double raggity.testing ships. A wrapper that drops part
of a contract fails type-checking (the contracts are Protocols in raggity/core/protocols.py); one
that keeps the names but breaks the behaviour fails here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from raggity.api.history import Exchange, HistoryGenerator
from raggity.config.schema import EmbeddingConfig, GenerationConfig
from raggity.core.protocols import Embedder, Generator, Scorer, Tokenizer
from raggity.inference.cross_encoder import OnnxCrossEncoder
from raggity.inference.embedder import OnnxEmbedder
from raggity.inference.generator import LlamaGenerator
from raggity.inference.tokenizer import HFTokenizer
from raggity.models.registry import resolve_embedder, resolve_generator
from raggity.testing import HashEmbedder, RecordingEmbedder, RecordingGenerator, ScriptedGenerator
from tests.inference.cross_encoder_model import build_test_cross_encoder
from tests.isolation import isolated_state

MESSAGES = [
    {"role": "system", "content": "Answer in one short sentence."},
    {"role": "user", "content": "Paris is the capital of France. What is the capital of France?"},
]


@pytest.fixture(scope="module")
def llama(_state_dirs: dict[str, Path]) -> LlamaGenerator:
    with isolated_state(_state_dirs):  # module fixtures run outside conftest's per-test isolation
        files = resolve_generator(GenerationConfig(model="smollm2-135m-instruct"), Path("."))
        return LlamaGenerator(files.gguf, identity=files.identity, threads=1)


def _with_history(inner: Generator) -> Generator:
    wrapper = HistoryGenerator(lambda: inner, inner.identity)
    wrapper.set_history([Exchange("Where is Paris?", "In France.")])
    return wrapper


GENERATORS: dict[str, Callable[[LlamaGenerator], Generator]] = {
    "llama.cpp": lambda real: real,
    "chat history over llama.cpp": _with_history,
    "recording over llama.cpp": RecordingGenerator,
    "scripted": lambda _: ScriptedGenerator(lambda _: "Paris is the capital of France."),
}


@pytest.mark.parametrize("name", GENERATORS)
def test_every_generator_fulfils_the_contract(name: str, llama: LlamaGenerator) -> None:
    generator = GENERATORS[name](llama)

    assert generator.identity
    assert generator.context_size > 0
    assert generator.count_tokens("Paris is the capital of France.") > 0
    pieces = list(generator.stream(MESSAGES, max_tokens=8, temperature=0.0))
    assert pieces
    assert all(isinstance(p, str) for p in pieces)
    assert "".join(pieces).strip()
    # The judgement is read through this: a probability, never more than certain.
    for text in ("Yes", "No", "The sources do not"):
        p = generator.continuation_probability(MESSAGES, text)
        assert 0.0 <= p <= 1.0
    # Reading a judgement must not change the reply that follows (llama.cpp's cache is shared).
    assert "".join(generator.stream(MESSAGES, max_tokens=8, temperature=0.0)) == "".join(pieces)


def test_the_history_wrapper_judges_the_prompt_it_answers() -> None:
    """Chat reads the judgement from the same prompt its answer is written from, history included:
    otherwise it would decline (or not) on a prompt it never answers."""
    inner = ScriptedGenerator(lambda _: "In Paris.")
    wrapper = HistoryGenerator(lambda: inner, "id")
    wrapper.set_history([Exchange("Where is Paris?", "In France.")])

    wrapper.continuation_probability(MESSAGES, "Yes")
    list(wrapper.stream(MESSAGES, max_tokens=4, temperature=0.0))

    [(judged, _)] = inner.judged
    assert judged == inner.calls[0]
    assert {"role": "assistant", "content": "In France."} in judged


@pytest.fixture(scope="module")
def onnx_embedder(_state_dirs: dict[str, Path]) -> OnnxEmbedder:
    with isolated_state(_state_dirs):
        files = resolve_embedder(EmbeddingConfig(), Path("."))
        return OnnxEmbedder(files.onnx, files.tokenizer, identity=files.identity, threads=1)


EMBEDDERS: dict[str, Callable[[OnnxEmbedder], Embedder]] = {
    "onnx": lambda real: real,
    "recording over onnx": RecordingEmbedder,
    "hash": lambda _: HashEmbedder(),
}


@pytest.mark.parametrize("name", EMBEDDERS)
def test_every_embedder_fulfils_the_contract(name: str, onnx_embedder: OnnxEmbedder) -> None:
    embedder = EMBEDDERS[name](onnx_embedder)
    texts = ["the cat sat on the mat", "a dog barked", "the cat sat on the mat"]

    vectors = embedder.embed(texts)

    assert embedder.identity
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, embedder.dim)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vectors[0], vectors[2], atol=1e-6)  # deterministic
    assert embedder.embed([]).shape[0] == 0


def test_the_tokenizer_fulfils_the_contract() -> None:
    tokenizer: Tokenizer = HFTokenizer(resolve_embedder(EmbeddingConfig(), Path(".")).tokenizer)
    text = "Tokenizers split text, e.g. 'don't' and naïve café."

    spans = tokenizer.token_offsets(text)

    assert spans
    assert all(0 <= start < end <= len(text) for start, end in spans)
    assert spans == sorted(spans)


def test_the_cross_encoder_fulfils_the_contract(tmp_path: Path) -> None:
    scorer: Scorer = OnnxCrossEncoder(build_test_cross_encoder(tmp_path), threads=1)

    scores = scorer.score("how do cats purr", ["cats purr loudly", "stock prices fell", ""])

    assert len(scores) == 3
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores[0] > scores[1]
    assert scorer.score("anything", []) == []
