"""`make bench-busy`: time to first token and decoding speed of the generator while busy processes
compete for the CPUs, with llama.cpp set up the old way and raggity's way, in the same run.

    python -m bench.busy_cpu [--model qwen2.5-coder-1.5b-instruct] [--tokens 32] [--hogs 0 1 2]

For each number of busy-loop processes (started here, one `while True: pass` each, stopped after),
a fresh child process per setting loads the model and answers one short prompt:

- old: what raggity did before: `os.cpu_count()` threads and llama.cpp's OpenMP threads spinning at
  barriers (OMP_WAIT_POLICY and GOMP_SPINCOUNT unset);
- new: `LlamaGenerator` as raggity loads it now: threads from the CPU budget (affinity, cgroup quota)
  and sleeping OpenMP threads (raggity/inference/llama_runtime.py).

The two alternate within each load level. Decoding stops at --tokens or after --decode-limit seconds,
whichever comes first, so a collapse is reported as a rate instead of stalling the run. Prints a
table and writes bench/results/busy_cpu.json. On a machine shared with other work the figures are
noisy: the load average before each run is printed with it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PROMPT = "Write a short paragraph about the history of the bicycle."
MODES = ("old", "new")
_WAIT_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def _load(mode: str, model: str) -> tuple[Any, int]:
    """The llama object as `mode` sets it up, and its thread count."""
    from raggity.config.schema import GenerationConfig  # noqa: PLC0415 - the child imports what it measures
    from raggity.models.registry import resolve_generator  # noqa: PLC0415 - the child imports what it measures

    gguf = resolve_generator(GenerationConfig(model=model), ROOT).gguf
    if mode == "old":
        from llama_cpp import Llama  # noqa: PLC0415 - the child imports what it measures

        threads = os.cpu_count() or 1
        # The generator's former constructor call, word for word.
        llm = Llama(model_path=str(gguf), n_ctx=4096, n_threads=threads, seed=0, verbose=False)
        return llm, threads
    from raggity.inference.generator import LlamaGenerator  # noqa: PLC0415 - the child imports what it measures

    generator = LlamaGenerator(gguf, identity=model, context_size=4096)
    return generator._llm, generator.threads


def child(mode: str, model: str, tokens: int, decode_limit: float) -> dict[str, Any]:
    """One measurement in this process: load, warm up (one token), then time the prompt."""
    llm, threads = _load(mode, model)
    messages = [{"role": "user", "content": PROMPT}]
    llm.create_chat_completion(messages=[{"role": "user", "content": "Hi"}], max_tokens=1, temperature=0.0)
    began = time.perf_counter()
    stamps: list[float] = []
    parts = llm.create_chat_completion(
        messages=messages, max_tokens=tokens, temperature=0.0, stream=True, repeat_penalty=1.1
    )
    for part in parts:
        if part["choices"][0]["delta"].get("content"):
            stamps.append(time.perf_counter())
            if stamps[-1] - stamps[0] > decode_limit:
                break
    first = stamps[0] - began if stamps else float("nan")
    rate = (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else float("nan")
    return {"threads": threads, "first_token_s": first, "decode_tokens_per_s": rate, "tokens": len(stamps)}


def _run_child(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in _WAIT_VARIABLES}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    argv = [sys.executable, "-m", "bench.busy_cpu", "--child", mode, "--model", args.model]
    argv += ["--tokens", str(args.tokens), "--decode-limit", str(args.decode_limit)]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} child failed ({done.returncode}): {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _hogs(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--hogs", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--decode-limit", type=float, default=60.0)
    parser.add_argument("--child", choices=MODES)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.model, args.tokens, args.decode_limit)))
        return
    rows: list[dict[str, Any]] = []
    for count in args.hogs:
        busy = _hogs(count)
        try:
            time.sleep(1.0)  # let the scheduler spread them
            for mode in MODES:
                load = os.getloadavg()[0]
                rows.append({"busy": count, "mode": mode, "load_before": load, **_run_child(mode, args)})
                print(json.dumps(rows[-1]), flush=True)
        finally:
            for process in busy:
                process.kill()
                process.wait()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "busy_cpu.json").write_text(json.dumps({"model": args.model, "rows": rows}, indent=2))
    _print(args.model, args.tokens, rows)


def _print(model: str, tokens: int, rows: list[dict[str, Any]]) -> None:
    print(f"\n{model}, {PROMPT!r}, up to {tokens} tokens (old: spinning, os.cpu_count() threads)")
    print(
        f"{'busy':>4} {'mode':>4} {'threads':>7} {'load':>6} {'first token s':>13} {'decode tok/s':>12} {'tokens':>6}"
    )
    for r in rows:
        print(
            f"{r['busy']:>4} {r['mode']:>4} {r['threads']:>7} {r['load_before']:>6.2f} "
            f"{r['first_token_s']:>13.2f} {r['decode_tokens_per_s']:>12.2f} {r['tokens']:>6}"
        )
    print(f"written to {RESULTS / 'busy_cpu.json'}")


if __name__ == "__main__":
    main()
