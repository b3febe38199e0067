"""bench/random_gguf.py: the GPU benchmark's stand-in model. Made here at a tiny shape and loaded by
the real llama.cpp; its 1.5B shape is read against the packaged Qwen2.5-Coder-1.5B GGUF."""

from __future__ import annotations

import json
from pathlib import Path

import gguf

from bench.random_gguf import SHAPES, dump_tokenizer, make
from raggity.config.schema import GenerationConfig
from raggity.inference.generator import LlamaGenerator
from raggity.models.registry import resolve_generator


def _gguf(name: str) -> Path:
    return resolve_generator(GenerationConfig(model=name), Path(".")).gguf


def test_a_tiny_random_model_loads_decodes_and_tokenizes_as_its_source(tmp_path: Path) -> None:
    source = _gguf("smollm2-135m-instruct")
    dump_tokenizer(source, tmp_path / "tokenizer.json")
    tokenizer = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
    assert "tokenizer.chat_template" in tokenizer
    model = make(tmp_path / "tiny.gguf", tokenizer, SHAPES["tiny"])
    generator = LlamaGenerator(model, identity="tiny", threads=1, context_size=512)
    meta = generator._llm.metadata
    assert (meta["general.architecture"], meta["qwen2.block_count"], meta["qwen2.embedding_length"]) == (
        "qwen2",
        "2",
        "64",
    )
    original = LlamaGenerator(source, identity="smollm2", threads=1, context_size=512)
    text = "Where is the restic repository password kept?"
    assert generator.count_tokens(text) == original.count_tokens(text)
    assert "".join(generator.stream([{"role": "user", "content": "Hi"}], max_tokens=3, temperature=0.0))


def test_the_1_5b_shape_is_the_packaged_qwen_models() -> None:
    reader = gguf.GGUFReader(_gguf("qwen2.5-coder-1.5b-instruct"))
    fields = {name: field.contents() for name, field in reader.fields.items() if name.startswith("qwen2.")}
    shape = SHAPES["qwen2.5-1.5b"]
    assert fields["qwen2.block_count"] == shape.layers
    assert fields["qwen2.embedding_length"] == shape.hidden
    assert fields["qwen2.feed_forward_length"] == shape.ffn
    assert fields["qwen2.attention.head_count"] == shape.heads
    assert fields["qwen2.attention.head_count_kv"] == shape.kv_heads
    assert fields["qwen2.rope.freq_base"] == shape.rope_theta
    tensors = {t.name: [int(n) for n in t.shape] for t in reader.tensors}
    assert tensors["token_embd.weight"] == [shape.hidden, shape.vocab]
    assert ("output.weight" not in tensors) == shape.tied_output
    assert sum(name.startswith("blk.0.") for name in tensors) == 12  # the tensors make() writes per layer
