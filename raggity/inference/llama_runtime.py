"""Loads llama.cpp's Python bindings with sleeping worker threads, and says what the build can offload."""

from __future__ import annotations

import os
from typing import Any

from raggity.core.errors import ModelError

# llama.cpp's CPU backend (Linux and Windows builds) runs its threads under OpenMP, and every matrix
# step ends at an OpenMP barrier. By default the GNU runtime spins there for ~300,000 rounds before it
# sleeps: on a busy machine a spinning thread burns the time slice the thread it waits for needs.
# bench/busy_cpu.py, 1.5B model, 2 cores shared with other work (load 15-21): spinning decoded 0.2-0.6
# tokens/s with a first token after 3-25 s; sleeping threads 6-10 tokens/s, first token 0.4-1.2 s.
# The price is a futex wake-up at each barrier on an idle machine: 21 against 30 tokens/s in one
# probe at load 1.8 (docs/models.md, "Busy machines"). The runtime reads these variables
# once, when it is loaded, so they are set before the bindings are first imported; a user's own
# OMP_WAIT_POLICY or GOMP_SPINCOUNT wins. Builds without OpenMP (macOS) ignore them.
_WAIT_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def sleeping_threads_environment(environ: dict[str, str]) -> dict[str, str]:
    """The variables to add to `environ` so that OpenMP threads sleep at barriers (none when the
    user chose a policy)."""
    if any(name in environ for name in _WAIT_VARIABLES):
        return {}
    return {"OMP_WAIT_POLICY": "PASSIVE"}


def bindings() -> Any:
    """The `llama_cpp` module, its OpenMP runtime told to let idle threads sleep."""
    os.environ.update(sleeping_threads_environment(dict(os.environ)))
    try:
        import llama_cpp  # noqa: PLC0415 - loads the runtime on first use
    except ImportError as exc:  # the compiled extension failed to build or load
        raise ModelError(f"llama-cpp-python is not importable: {exc}", "reinstall: make install") from exc
    return llama_cpp


def supports_gpu_offload() -> bool:
    """Whether this llama-cpp-python build can put layers on a GPU (CUDA, Metal, Vulkan, ...)."""
    return bool(bindings().llama_supports_gpu_offload())


def gpu_layers_to_use(configured: int, supported: bool) -> int:
    """The n_gpu_layers handed to llama.cpp: -1 (auto) is every layer where the build can offload
    and none where it cannot; a count the user set is passed as it is (a CPU-only build ignores it)."""
    if configured < 0:
        return -1 if supported else 0
    return configured
