"""Ctrl-C inside llama.cpp's sampler callback: the generation stops and KeyboardInterrupt reaches the
caller, as it does anywhere else (ctypes cannot pass an exception through C: it printed "Exception
ignored", a traceback, and generation went on)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from raggity.config.schema import GenerationConfig
from raggity.inference.generator import LlamaGenerator
from raggity.models.registry import resolve_generator
from tests.isolation import isolated_state

SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"question": {"type": "string", "minLength": 1, "maxLength": 400}},
    "required": ["question"],
}
MESSAGES = [
    {"role": "user", "content": "Rewrite as one question in JSON: and on macOS, how do I install it?"}
]


@pytest.fixture(scope="module")
def generator(_state_dirs: dict[str, Path]) -> LlamaGenerator:
    with isolated_state(_state_dirs):  # module fixtures run outside conftest's per-test isolation
        files = resolve_generator(GenerationConfig(model="smollm2-135m-instruct"), Path("."))
        return LlamaGenerator(files.gguf, identity=files.identity)


@contextmanager
def ctrl_c_in_processor(file_name: str, at_call: int) -> Iterator[list[int]]:
    """KeyboardInterrupt raised when the logits processor defined in `file_name` starts its
    `at_call`-th step: where Ctrl-C lands when it is pressed while that processor runs (a tracer
    raising at the frame's call event raises in that frame). Yields the processor's call count."""
    calls = [0]

    def tracer(frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        if event == "call" and code.co_name == "__call__" and code.co_filename.endswith(file_name):
            calls[0] += 1
            if calls[0] == at_call:
                raise KeyboardInterrupt

    sys.settrace(tracer)
    try:
        yield calls
    finally:
        sys.settrace(None)


def test_ctrl_c_during_a_constrained_rewrite_stops_it_and_reaches_the_caller(
    generator: LlamaGenerator,
) -> None:
    pieces: list[str] = []
    stream = generator.stream(MESSAGES, max_tokens=64, temperature=0.0, json_schema=SCHEMA)
    with ctrl_c_in_processor("greedy_grammar.py", at_call=3), pytest.raises(KeyboardInterrupt):
        pieces.extend(stream)
    # Stopped at the interrupted step: at most the two tokens chosen before it reached the caller.
    assert len(pieces) <= 2
    # The model is usable afterwards: the next call is a whole reply.
    again = "".join(generator.stream(MESSAGES, max_tokens=64, temperature=0.0, json_schema=SCHEMA))
    assert json.loads(again)["question"]


def test_ctrl_c_during_a_judgement_stops_it_and_reaches_the_caller(generator: LlamaGenerator) -> None:
    with ctrl_c_in_processor("generator.py", at_call=2), pytest.raises(KeyboardInterrupt):
        generator.continuation_probability(MESSAGES, "The documents do not say how to install it on macOS.")
