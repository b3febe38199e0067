"""A GGUF of a real model's shape with random f16 weights and a real tokenizer, made with the `gguf`
package: what the GPU benchmark loads where a real model's weights cannot travel (over 64 MiB).

    python -m bench.random_gguf dump-tokenizer SOURCE.gguf tokenizer.json   # here, from a real GGUF
    python -m bench.random_gguf make OUT.gguf --tokenizer tokenizer.json [--shape qwen2.5-1.5b]

The tokenizer (every `tokenizer.*` key, the chat template included) is copied from a real GGUF, so
prompts tokenize and format as they would for that model; the weights are N(0, 0.02) noise, so the
text is nonsense but every matrix product has the real model's size: load, prefill and decode cost
what they would. Qwen2 architecture, as llama.cpp reads it (tensor names of convert_hf_to_gguf.py).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gguf
import numpy as np


@dataclass(frozen=True)
class Shape:
    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int  # rows of the embedding: at least the tokenizer's size (Qwen pads to 151,936)
    context: int = 32768
    rope_theta: float = 1_000_000.0
    # Qwen2.5-1.5B ties its output to the embedding, but the packaged GGUF (like most GGUF
    # exports) carries a separate output.weight: the one raggity runs, so the one copied here.
    tied_output: bool = False


SHAPES = {
    # Qwen2.5-1.5B(-Coder)-Instruct, from its config.json: 28 layers, 1536 wide, 12 heads, 2 KV heads.
    "qwen2.5-1.5b": Shape(layers=28, hidden=1536, ffn=8960, heads=12, kv_heads=2, vocab=151936),
    # For tests: every tensor a real model has, a few KB each.
    "tiny": Shape(layers=2, hidden=64, ffn=128, heads=4, kv_heads=2, vocab=0, context=2048),
}


def dump_tokenizer(source: Path, target: Path) -> int:
    """Writes every tokenizer.* key of `source` (value, type, element type) to `target` as JSON."""
    reader = gguf.GGUFReader(source)
    keys: dict[str, Any] = {}
    for name, field in reader.fields.items():
        if name.startswith("tokenizer."):
            sub = int(field.types[1]) if len(field.types) > 1 else None
            keys[name] = {"type": int(field.types[0]), "sub_type": sub, "value": field.contents()}
    target.write_text(json.dumps(keys), encoding="utf-8")
    return len(keys)


def make(target: Path, tokenizer: dict[str, Any], shape: Shape, seed: int = 0) -> Path:
    """Writes a Qwen2 GGUF of `shape` with random f16 weights and `tokenizer`'s keys."""
    tokens = len(tokenizer["tokenizer.ggml.tokens"]["value"])
    vocab = max(shape.vocab, tokens)
    rng = np.random.default_rng(seed)
    writer = gguf.GGUFWriter(target, "qwen2")
    writer.add_name(f"random-{shape.layers}x{shape.hidden}")
    writer.add_block_count(shape.layers)
    writer.add_context_length(shape.context)
    writer.add_embedding_length(shape.hidden)
    writer.add_feed_forward_length(shape.ffn)
    writer.add_head_count(shape.heads)
    writer.add_head_count_kv(shape.kv_heads)
    writer.add_rope_freq_base(shape.rope_theta)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    for name, key in tokenizer.items():
        sub = None if key["sub_type"] is None else gguf.GGUFValueType(key["sub_type"])
        writer.add_key_value(name, key["value"], gguf.GGUFValueType(key["type"]), sub)

    def weight(*dims: int) -> np.ndarray[Any, Any]:
        # numpy's order is the reverse of ggml's: (rows = outputs, columns = inputs).
        return (rng.standard_normal(dims, dtype=np.float32) * 0.02).astype(np.float16)

    def ones(n: int) -> np.ndarray[Any, Any]:
        return np.ones(n, dtype=np.float32)

    head = shape.hidden // shape.heads
    kv = head * shape.kv_heads
    writer.add_tensor("token_embd.weight", weight(vocab, shape.hidden))
    for i in range(shape.layers):
        block = f"blk.{i}"
        writer.add_tensor(f"{block}.attn_norm.weight", ones(shape.hidden))
        writer.add_tensor(f"{block}.attn_q.weight", weight(shape.hidden, shape.hidden))
        writer.add_tensor(f"{block}.attn_q.bias", np.zeros(shape.hidden, dtype=np.float32))
        writer.add_tensor(f"{block}.attn_k.weight", weight(kv, shape.hidden))
        writer.add_tensor(f"{block}.attn_k.bias", np.zeros(kv, dtype=np.float32))
        writer.add_tensor(f"{block}.attn_v.weight", weight(kv, shape.hidden))
        writer.add_tensor(f"{block}.attn_v.bias", np.zeros(kv, dtype=np.float32))
        writer.add_tensor(f"{block}.attn_output.weight", weight(shape.hidden, shape.hidden))
        writer.add_tensor(f"{block}.ffn_norm.weight", ones(shape.hidden))
        writer.add_tensor(f"{block}.ffn_gate.weight", weight(shape.ffn, shape.hidden))
        writer.add_tensor(f"{block}.ffn_up.weight", weight(shape.ffn, shape.hidden))
        writer.add_tensor(f"{block}.ffn_down.weight", weight(shape.hidden, shape.ffn))
    writer.add_tensor("output_norm.weight", ones(shape.hidden))
    if not shape.tied_output:
        writer.add_tensor("output.weight", weight(vocab, shape.hidden))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    dump = sub.add_parser("dump-tokenizer", help="copy a real GGUF's tokenizer keys to JSON")
    dump.add_argument("source", type=Path)
    dump.add_argument("target", type=Path)
    build = sub.add_parser("make", help="write a random-weight GGUF of a real shape")
    build.add_argument("target", type=Path)
    build.add_argument("--tokenizer", type=Path, required=True, help="JSON from dump-tokenizer")
    build.add_argument("--shape", choices=sorted(SHAPES), default="qwen2.5-1.5b")
    args = parser.parse_args()
    if args.command == "dump-tokenizer":
        print(f"{dump_tokenizer(args.source, args.target)} tokenizer keys -> {args.target}")
        return
    tokenizer = json.loads(args.tokenizer.read_text(encoding="utf-8"))
    path = make(args.target, tokenizer, SHAPES[args.shape])
    print(f"{path}: {path.stat().st_size / 1e9:.2f} GB, shape {args.shape}")


if __name__ == "__main__":
    main()
