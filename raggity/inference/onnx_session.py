"""Creates ONNX Runtime sessions tuned for small CPU machines, on a GPU where one is installed."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from raggity.core.errors import ModelError
from raggity.inference.cpu_budget import threads_to_use
from raggity.inference.optimized_model import discard, optimized_model
from raggity.models.hashing import cache_home

CPU = "CPUExecutionProvider"
# Tried in this order when no providers are configured. Each is listed by
# onnxruntime.get_available_providers() only in a build that has it (onnxruntime-gpu for CUDA,
# onnxruntime-directml on Windows; CoreML is in the macOS wheels). TensorRT and ROCm builds also list
# CUDA-style providers but need per-model engine set-up, so they are used only when named.
AUTO_PROVIDERS = ("CUDAExecutionProvider", "CoreMLExecutionProvider", "DmlExecutionProvider")


def choose_providers(configured: Sequence[str], available: Sequence[str]) -> list[str]:
    """The execution providers for a session, best first, always ending with the CPU.

    Empty `configured` means auto: the first GPU provider of AUTO_PROVIDERS the build has. A named
    provider the build lacks is an error, not a silent fallback to the CPU."""
    if configured:
        missing = [name for name in configured if name not in available]
        if missing:
            raise ModelError(
                f"[embedding] providers: {', '.join(missing)} not available in this onnxruntime "
                f"(available: {', '.join(available)})",
                "remove it from [embedding] providers, or install the onnxruntime build that has it "
                "(docs/models.md)",
            )
        chosen = list(dict.fromkeys(configured))
    else:
        chosen = [name for name in AUTO_PROVIDERS if name in available][:1]
    return chosen if CPU in chosen else [*chosen, CPU]


def _onnxruntime() -> Any:
    """onnxruntime, imported with its telemetry off. Its 1.31 Linux build starts Microsoft's 1DS
    telemetry, whose thread resolves mobile.events.data.microsoft.com during an ingest (seen with
    strace); ORT_DISABLE_TELEMETRY is read when the runtime loads, so it is set before the import
    (and Ray's workers, started from this process's environment, inherit it)."""
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    import onnxruntime as ort  # noqa: PLC0415 - loads the runtime on first use

    return ort


def available_providers() -> list[str]:
    ort = _onnxruntime()

    return list(ort.get_available_providers())


def optimized_models_home() -> Path:
    """Where optimised copies of ONNX models are kept (raggity.inference.optimized_model)."""
    return cache_home() / "onnx"


def create_session(
    model: Path, threads: int = 0, providers: Sequence[str] = (), optimized: Path | None = None
) -> Any:
    """A session for `model`. On the CPU alone it loads the model's optimised copy under
    `optimized` (default: optimized_models_home()), written on first use; GPU providers optimise
    for themselves, from the original."""
    ort = _onnxruntime()
    chosen = choose_providers(providers, available_providers())
    options = ort.SessionOptions()
    # One intra-op pool sized to the usable CPUs: inter-op parallelism only adds contention on 2 cores.
    options.intra_op_num_threads = threads_to_use(threads)
    options.inter_op_num_threads = 1
    # Idle pool threads sleep instead of spinning. On a machine shared with other work (the usual
    # 2-core case), spinning threads take the cores the busy ones need: with an LLM running beside it,
    # the embedding model ran 15-18% faster without spinning (same batches, interleaved, load 4).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Length-sorted batching feeds many distinct shapes, and a memory pattern is cached per shape:
    # measured on 512 mixed-length chunks, 1.7 GB resident with patterns, 1.1 GB without, same speed.
    # (Disabling the arena as well gives 0.34 GB but costs 45% of throughput.)
    options.enable_mem_pattern = False
    options.log_severity_level = 3
    if chosen == [CPU]:
        copy = optimized_model(ort, model, optimized or optimized_models_home())
        if copy is not None:
            try:
                return ort.InferenceSession(str(copy), sess_options=options, providers=chosen)
            except Exception:  # an entry it cannot load is written again next time
                discard(copy)
    try:
        return ort.InferenceSession(str(model), sess_options=options, providers=chosen)
    except Exception as exc:  # onnxruntime raises its own exception hierarchy for bad files
        raise ModelError(
            f"{model}: cannot load ONNX model: {exc}", "reinstall the model or fix the path"
        ) from exc
