"""Time to first text on a ~2,000-token prompt, and decoding speed, on the CPU and (where the
llama-cpp-python build has GPU offload) on the GPU, in one run (issue 43; docs/models.md, "Running on
a GPU").

    python -m bench.gpu [--model NAME | --gguf PATH] [--prompt-tokens 2000] [--decode 64]

Each device runs in a child process of its own that loads the generator as `rag ask` does, so a
build that crashes ends one row, not the run. Per device: load time; the judgement (the model's reading of one forced reply over
the whole prompt, from an empty cache: prefill alone, as every answer starts); time to first text
(prefill plus the first streamed piece, through the generator's own `stream`); and decoding speed
over `--decode` pieces with the end-of-text token held off, so that a model with random weights
(bench/random_gguf.py) decodes as many as a real one. The prompt is raggity's own docs/ text.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[1] / "docs"
QUESTION = "How do I run raggity's generator on a GPU?"


def prompt(count_tokens: Any, tokens: int) -> list[dict[str, str]]:
    """A system line, numbered sources from docs/ up to `tokens` tokens, and a question: a block that
    would pass `tokens` is skipped and later, smaller ones fill up to it (stopping at the first one
    made the 27 Nov prompt 1,557 tokens for 2,000 asked)."""
    sources: list[str] = []
    for page in sorted(DOCS.glob("*.md")):
        for block in page.read_text(encoding="utf-8").split("\n\n"):
            candidate = f"[{len(sources) + 1}] {block}"
            if count_tokens(_text(_messages([*sources, candidate]))) <= tokens:
                sources.append(candidate)
                if count_tokens(_text(_messages(sources))) >= tokens - 8:
                    return _messages(sources)
    return _messages(sources)


def _text(messages: list[dict[str, str]]) -> str:
    return messages[0]["content"] + messages[1]["content"]


def _messages(sources: list[str]) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "Answer from the numbered sources only, citing them as [n]."},
        {"role": "user", "content": "Sources:\n" + "\n\n".join(sources) + f"\n\nQuestion: {QUESTION}"},
    ]


def one(gguf: Path, device: str, prompt_tokens: int, decode: int, threads: int) -> dict[str, Any]:
    """One device's row, measured in this process."""
    from raggity.inference.generator import LlamaGenerator  # noqa: PLC0415 - the parent needs no model runtime

    began = time.perf_counter()
    generator = LlamaGenerator(
        gguf, identity="bench", context_size=4096, threads=threads, gpu_layers=-1 if device == "gpu" else 0
    )
    loaded = time.perf_counter() - began
    messages = prompt(generator.count_tokens, prompt_tokens)
    size = generator.count_tokens(_text(messages))
    began = time.perf_counter()
    generator.continuation_probability(messages, "Not in the sources", fresh=True)
    judgement = time.perf_counter() - began
    generator._llm.reset()  # the first text below reads the whole prompt again, as an answer does
    began = time.perf_counter()
    first_text = None
    for _ in generator.stream(messages, max_tokens=4, temperature=0.0):
        first_text = time.perf_counter() - began
        break
    llm = generator._llm
    began = time.perf_counter()
    pieces = 0
    for part in llm.create_chat_completion(
        messages=[{"role": "user", "content": "Write a long story."}],
        max_tokens=decode,
        temperature=0.0,
        stream=True,
        logit_bias={llm.token_eos(): -1e9},
    ):
        if part["choices"][0]["delta"].get("content"):
            pieces += 1
    decoding = time.perf_counter() - began
    return {
        "device": device,
        "gpu_layers": generator.gpu_layers,
        "threads": generator.threads,
        "load_s": round(loaded, 3),
        "prompt_tokens": size,
        "judgement_s": round(judgement, 3),
        "first_text_s": None if first_text is None else round(first_text, 3),
        "decoded_pieces": pieces,
        "pieces_per_s": round(pieces / decoding, 1) if decoding > 0 else None,
    }


def _gguf(args: argparse.Namespace) -> Path:
    if args.gguf:
        return Path(args.gguf)
    from raggity.config.schema import GenerationConfig  # noqa: PLC0415 - the parent needs no model runtime
    from raggity.models.registry import resolve_generator  # noqa: PLC0415 - as above

    return resolve_generator(GenerationConfig(model=args.model), Path(".")).gguf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--model", default="qwen2.5-coder-1.5b-instruct", help="a name [generation] model takes"
    )
    parser.add_argument("--gguf", help="a GGUF file instead of --model")
    parser.add_argument("--prompt-tokens", type=int, default=2000)
    parser.add_argument("--decode", type=int, default=64)
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: the process's CPUs)")
    parser.add_argument("--one", choices=["cpu", "gpu"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    gguf = _gguf(args)
    if args.one:
        print(json.dumps(one(gguf, args.one, args.prompt_tokens, args.decode, args.threads)), flush=True)
        return
    from raggity.inference.llama_runtime import supports_gpu_offload  # noqa: PLC0415 - loads the bindings

    devices = ["cpu", "gpu"] if supports_gpu_offload() else ["cpu"]
    print(f"model {gguf}; devices {', '.join(devices)}", flush=True)
    for device in devices:
        argv = [sys.executable, "-m", "bench.gpu", "--gguf", str(gguf), "--one", device]
        argv += ["--prompt-tokens", str(args.prompt_tokens), "--decode", str(args.decode)]
        argv += ["--threads", str(args.threads)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(
                json.dumps({"device": device, "exit": done.returncode, "stderr": done.stderr[-1500:]}),
                flush=True,
            )
            continue
        print(done.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
