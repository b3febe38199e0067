"""Ctrl-C inside llama.cpp's sampler callback: the generation stops and KeyboardInterrupt reaches the
caller, as it does anywhere else (ctypes cannot pass an exception through C: it printed "Exception
ignored", a traceback, and generation went on)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
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
from tests.support import interruptible, this_checkout

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


LOADING_CHILD = """
import sys, threading
from pathlib import Path
from raggity.inference import generator
try:
    generator.LlamaGenerator(Path(sys.argv[1]), identity="test")
except KeyboardInterrupt:
    loader = getattr(generator, "LOADER_THREAD", None)
    loading = any(t.name == loader and t.is_alive() for t in threading.enumerate())
    print(f"interrupted while loading: {loading}", file=sys.stderr, flush=True)
    sys.exit(130)
print("loaded", flush=True)
"""


def test_ctrl_c_while_the_weights_load_ends_the_wait_at_once_and_its_message_is_seen(
    _state_dirs: dict[str, Path],  # noqa: PT019 - its value is used: the models folder
) -> None:
    """Before: Ctrl-C waited for llama.cpp's loader (one C call, up to 20 s on a busy machine) and
    was raised only once the model had loaded."""
    with isolated_state(_state_dirs):
        gguf = resolve_generator(GenerationConfig(model="qwen2.5-coder-0.5b-instruct"), Path(".")).gguf
    child = interruptible(
        [sys.executable, "-c", LOADING_CHILD, str(gguf)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=this_checkout(dict(os.environ)),
    )
    # llama-cpp-python points stderr at /dev/null while llama.cpp loads: the load is under way.
    stderr_link = Path(f"/proc/{child.pid}/fd/2")
    while child.poll() is None and os.readlink(stderr_link) != os.devnull:
        time.sleep(0.001)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=300)

    assert child.returncode == 130, (out, err)
    # Raised while the weights were still loading, and written where the terminal shows it.
    assert err.strip() == "interrupted while loading: True"
