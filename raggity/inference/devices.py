"""Which device runs each model, and why: what `rag status` and `rag doctor` tell the user.

Decided by the same functions the runtimes are set up with (gpu_layers_to_use, choose_providers,
threads_to_use), so the report cannot drift from what loading a model does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from raggity.core.errors import ModelError
from raggity.inference.cpu_budget import process_budget, threads_to_use
from raggity.inference.llama_runtime import gpu_layers_to_use
from raggity.inference.onnx_session import CPU, choose_providers

GPU_BUILD_DOCS = "docs/models.md"


@dataclass(frozen=True)
class Placement:
    role: str
    device: str  # "CPU, 2 threads", "GPU (all layers)", "CUDAExecutionProvider", ...
    why: str
    ok: bool = True  # False: the configured placement cannot be set up


def _cpu(configured: int, key: str) -> tuple[str, str]:
    """The CPU device with its thread count, and why that many threads."""
    count = threads_to_use(configured)
    device = f"CPU, {count} thread{'s' if count != 1 else ''}"
    return device, f"{key} = {configured}" if configured else f"threads auto: {process_budget().describe()}"


def generator_placement(gpu_layers: int, threads: int, offload_supported: bool) -> Placement:
    layers = gpu_layers_to_use(gpu_layers, offload_supported)
    cpu, threads_why = _cpu(threads, "[generation] threads")
    if layers == 0 and gpu_layers == 0:
        return Placement("generator", cpu, f"[generation] gpu_layers = 0; {threads_why}")
    if not offload_supported:
        why = "this llama-cpp-python build has no GPU offload"
        if gpu_layers > 0:
            why = f"[generation] gpu_layers = {gpu_layers}, but {why}"
        return Placement("generator", cpu, f"{why} (GPU builds: {GPU_BUILD_DOCS}); {threads_why}")
    if layers < 0:
        return Placement("generator", "GPU, all layers", "llama-cpp-python was built with GPU offload")
    return Placement(
        "generator",
        f"GPU, {layers} layers; the rest on {cpu}",
        f"[generation] gpu_layers = {layers}; {threads_why}",
    )


def embedder_placement(providers: Sequence[str], threads: int, available: Sequence[str]) -> Placement:
    try:
        chosen = choose_providers(providers, available)
    except ModelError as exc:
        return Placement("embedder", "none", f"{exc.message}; fix: {exc.hint}", ok=False)
    reason = f"[embedding] providers = {list(providers)}" if providers else "auto"
    if chosen[0] != CPU:
        return Placement("embedder", chosen[0], f"{reason}, and onnxruntime has it")
    cpu, threads_why = _cpu(threads, "[embedding] threads")
    if providers:
        return Placement("embedder", cpu, f"{reason}; {threads_why}")
    return Placement(
        "embedder",
        cpu,
        f"this onnxruntime has no GPU provider, only {', '.join(available)} (GPU builds: "
        f"{GPU_BUILD_DOCS}); {threads_why}",
    )
