"""`rag doctor`'s generator check: the configured model loaded on its device, and a few tokens
decoded, in a child process, so that a build that crashes is reported instead of ending doctor."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from raggity.api.doctor import Check
from raggity.config.schema import Config
from raggity.core.errors import ModelError
from raggity.models.registry import resolve_generator

NAME = "generator run"
# Loading the 1.5B model and decoding four tokens takes a few seconds on 2 busy cores; a first use
# of a packaged model also joins its parts (4 s).
TIMEOUT_S = 300.0
GPU_CRASH_FIX = (
    "set [generation] gpu_layers = 0 to answer on the CPU, and see docs/models.md, 'Running on a GPU', "
    "for a GPU build that was run"
)
CPU_CRASH_FIX = "reinstall llama-cpp-python (make install), or try another [generation] model"


def signal_name(returncode: int) -> str:
    """ "SIGSEGV" for a child ended by signal 11 (subprocess reports it as -11)."""
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def probe_command(config: Config, gguf: Path) -> list[str]:
    gen = config.generation
    return [
        sys.executable,
        "-m",
        "raggity.inference.generator_probe",
        str(gguf),
        "--gpu-layers",
        str(gen.gpu_layers),
        "--threads",
        str(gen.threads),
    ]


def generator_checks(
    config: Config,
    *,
    timeout: float = TIMEOUT_S,
    command: Callable[[Config, Path], list[str]] = probe_command,
) -> list[Check]:
    """`command`: the child to run (the probe above; a test passes another)."""
    try:
        gguf = resolve_generator(config.generation, config.base_dir).gguf
    except ModelError:
        return []  # the model check above already says what is missing, with its fix
    from raggity.inference.llama_runtime import supports_gpu_offload  # noqa: PLC0415 - loads llama.cpp's bindings

    try:
        offload = supports_gpu_offload()
    except ModelError as exc:
        return [Check(NAME, False, exc.message, exc.hint)]
    try:
        done = subprocess.run(
            command(config, gguf), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return [
            Check(NAME, False, f"loading {gguf.name} and decoding 4 tokens took over {timeout:.0f} s", "")
        ]
    gpu = offload and config.generation.gpu_layers != 0
    return [interpret(done.returncode, done.stdout, done.stderr, gpu=gpu)]


def interpret(returncode: int, stdout: str, stderr: str, *, gpu: bool) -> Check:
    """The check for a finished probe: its JSON line, its error line, or the signal that ended it."""
    if returncode < 0:
        name = signal_name(returncode)
        where = "while loading or decoding (GPU offload asked for)" if gpu else "while loading or decoding"
        return Check(
            NAME, False, f"the generator crashed with {name} {where}", GPU_CRASH_FIX if gpu else CPU_CRASH_FIX
        )
    if returncode != 0:
        lines = [line.strip() for line in stderr.splitlines() if line.strip()]
        error = next((line for line in lines if line.startswith("error:")), lines[-1] if lines else "")
        return Check(NAME, False, f"the generator did not load (exit {returncode}): {error[:300]}", "")
    try:
        report = json.loads(stdout.strip().splitlines()[-1])
        layers = int(report["gpu_layers"])
        device = "CPU" if layers == 0 else ("GPU, all layers" if layers < 0 else f"GPU, {layers} layers")
        message = f"loaded on {device} in {report['load_seconds']:.2f} s, decoded in {report['decode_seconds']:.2f} s"
    except (ValueError, IndexError, KeyError, TypeError):
        return Check(NAME, False, f"the generator probe printed no report: {stdout[-200:]!r}", "")
    return Check(NAME, True, message)
