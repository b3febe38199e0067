"""`python -m raggity.inference.generator_probe GGUF`: load the generator as `rag ask` would and
decode a few tokens, in a process of its own.

`rag doctor` runs this in a child process: a llama.cpp build that crashes while it loads a model (a
GPU build did, with SIGSEGV) then ends this child, not the command the user typed, and the parent
reports the signal with its fix. Prints one JSON line on success.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from raggity.core.errors import RaggityError
from raggity.inference.generator import LlamaGenerator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gguf", type=Path)
    parser.add_argument("--gpu-layers", type=int, default=-1)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--tokens", type=int, default=4)
    args = parser.parse_args()
    started = time.perf_counter()
    try:
        generator = LlamaGenerator(
            args.gguf, identity="probe", context_size=512, threads=args.threads, gpu_layers=args.gpu_layers
        )
    except RaggityError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        sys.exit(1)
    loaded = time.perf_counter()
    text = "".join(
        generator.stream([{"role": "user", "content": "Say hello."}], max_tokens=args.tokens, temperature=0.0)
    )
    report = {
        "gpu_offload_supported": generator.gpu_offload_supported,
        "gpu_layers": generator.gpu_layers,
        "load_seconds": round(loaded - started, 3),
        "decode_seconds": round(time.perf_counter() - loaded, 3),
        "decoded_chars": len(text),
    }
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
