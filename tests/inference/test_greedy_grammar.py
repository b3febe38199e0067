"""Greedy grammar decoding with the real small GGUF: the fast path emits exactly what llama.cpp's
own grammar sampling emits, its replies satisfy the schema, and it rarely needs a full check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llama_cpp import LogitsProcessorList

from raggity.config.schema import GenerationConfig
from raggity.inference.generator import LlamaGenerator
from raggity.inference.greedy_grammar import GreedyGrammar
from raggity.models.registry import resolve_generator
from tests.isolation import isolated_state

SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "rivers": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string"}},
        "kind": {"type": "string", "enum": ["capital", "port", "village"]},
    },
    "required": ["city", "rivers", "kind"],
}
PROMPTS = [
    "Vienna lies on the Danube and is the capital of Austria. Describe it in JSON.",
    "Hamburg is a port on the Elbe and the Alster. Describe it in JSON.",
    "Tell me about a village by the Rhine, in JSON.",
]


@pytest.fixture(scope="module")
def generator(_state_dirs: dict[str, Path]) -> LlamaGenerator:
    with isolated_state(_state_dirs):  # module fixtures run outside conftest's per-test isolation
        files = resolve_generator(GenerationConfig(model="smollm2-135m-instruct"), Path("."))
        return LlamaGenerator(files.gguf, identity=files.identity)


def _messages(prompt: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}]


def _with_guide(generator: LlamaGenerator, prompt: str, *, fast: bool) -> tuple[str, GreedyGrammar]:
    guide = GreedyGrammar(generator._llm, SCHEMA, repeat_penalty=1.1)
    guide.fast_path = fast
    try:
        reply: Any = generator._llm.create_chat_completion(
            messages=_messages(prompt),
            max_tokens=96,
            temperature=0.0,
            repeat_penalty=1.0,
            logits_processor=LogitsProcessorList([guide]),
        )
    finally:
        guide.close()
    return str(reply["choices"][0]["message"]["content"]), guide


def _llama_grammar(generator: LlamaGenerator, prompt: str) -> str:
    reply: Any = generator._llm.create_chat_completion(
        messages=_messages(prompt),
        max_tokens=96,
        temperature=0.0,
        repeat_penalty=1.1,
        response_format={"type": "json_object", "schema": SCHEMA},
    )
    return str(reply["choices"][0]["message"]["content"])


@pytest.mark.parametrize("prompt", PROMPTS)
def test_fast_path_emits_what_full_grammar_sampling_emits(generator: LlamaGenerator, prompt: str) -> None:
    fast, guide = _with_guide(generator, prompt, fast=True)
    full, checked = _with_guide(generator, prompt, fast=False)
    shipped = "".join(generator.stream(_messages(prompt), max_tokens=96, temperature=0.0, json_schema=SCHEMA))
    assert fast == full == shipped == _llama_grammar(generator, prompt)
    # Every step of the slow variant filters the vocabulary; the fast one almost never needs to.
    assert checked.full_checks > 10
    assert guide.full_checks < checked.full_checks / 2


def test_stream_with_a_schema_at_temperature_zero_gives_schema_valid_json(generator: LlamaGenerator) -> None:
    for prompt in PROMPTS:
        raw = "".join(generator.stream(_messages(prompt), max_tokens=96, temperature=0.0, json_schema=SCHEMA))
        data = json.loads(raw)
        assert set(data) == {"city", "rivers", "kind"}
        assert data["kind"] in {"capital", "port", "village"}
        assert 1 <= len(data["rivers"]) <= 3
        assert all(isinstance(r, str) for r in data["rivers"])
