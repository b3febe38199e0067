"""Loading a GGUF that llama.cpp cannot use is a one-line ModelError whose fix names the right key."""

from __future__ import annotations

from pathlib import Path

import pytest

from raggity.config.schema import GenerationConfig
from raggity.core.errors import ModelError
from raggity.inference.generator import LlamaGenerator
from raggity.models.registry import resolve_generator


def test_a_context_too_large_to_set_up_names_context_size() -> None:
    gguf = resolve_generator(GenerationConfig(model="smollm2-135m-instruct"), Path(".")).gguf
    with pytest.raises(ModelError) as raised:
        # Hundreds of GB of KV cache: the weights load, the context cannot be allocated (Linux's
        # default overcommit refuses an allocation beyond memory and swap). Not more: llama.cpp takes
        # memory in proportion on the way, 20 GB for a billion; this takes 0.7 GB for 0.4 s.
        LlamaGenerator(gguf, identity="smollm2", context_size=10_000_000, threads=1)
    assert "lower [generation] context_size (10000000 tokens" in raised.value.hint


def test_a_file_that_is_not_a_gguf_names_the_model_keys(tmp_path: Path) -> None:
    junk = tmp_path / "model.gguf"
    junk.write_bytes(b"not a gguf at all" * 64)
    with pytest.raises(ModelError) as raised:
        LlamaGenerator(junk, identity="junk", threads=1)
    assert raised.value.hint == "check [generation] model and model_path"
    assert str(junk) in raised.value.message
