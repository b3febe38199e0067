"""Loads llama.cpp's Python bindings with sleeping worker threads, and says what the build can offload."""

from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
from pathlib import Path
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


# A CUDA build of llama-cpp-python 0.3.36 crashed (SIGSEGV while the model loads) whenever numpy had
# been imported before llama_cpp, and ran when llama_cpp came first (issue 43; an H200 machine, numpy
# 2.5.2 with scipy-openblas 0.3.34). `import llama_cpp` imports numpy itself, right after it opens its
# native library, so at model-load time both orders hold the same libraries and numpy's OpenBLAS thread
# pool (started when numpy is imported); what differs is only the order the shared libraries were
# loaded in: llama.cpp's (ggml, libgomp, the CUDA libraries) before or after numpy's (OpenBLAS,
# libgfortran). Which constructor or runtime that order trips is not established (no GPU in this
# session; docs/models.md, "Running on a GPU"). So a process that will generate opens llama.cpp's
# library first, here, before anything imports numpy: the order that was seen to work. It is the
# library alone, through ctypes, because the bindings module imports numpy.
# The names llama_cpp's own loader tries, in its order (llama_cpp/_ctypes_extensions.py).
_NATIVE_NAMES = {
    "linux": ("libllama.so",),
    "darwin": ("libllama.so", "libllama.dylib"),
    "win32": ("llama.dll", "libllama.dll"),
}
_native: list[ctypes.CDLL] = []


def native_library() -> Path | None:
    """llama.cpp's shared library as llama_cpp will open it ($LLAMA_CPP_LIB_PATH, else the package's
    lib folder), found without importing the package; None when it is not installed."""
    names = _NATIVE_NAMES.get(sys.platform, _NATIVE_NAMES["linux"])
    override = os.environ.get("LLAMA_CPP_LIB_PATH")
    if override:
        folder = Path(override)
    else:
        spec = importlib.util.find_spec("llama_cpp")
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = Path(next(iter(spec.submodule_search_locations))) / "lib"
    return next((folder / name for name in names if (folder / name).is_file()), None)


def load_native_first() -> bool:
    """Opens llama.cpp's native library now, before numpy, in a process that will generate (see
    above). True when llama.cpp's library is loaded and numpy was not yet imported: the order the
    GPU build needs. Sets the OpenMP wait policy first, since the runtime reads it when it loads."""
    os.environ.update(sleeping_threads_environment(dict(os.environ)))
    if "numpy" in sys.modules:
        return False
    library = native_library()
    if library is None:
        return False
    try:
        _native.append(ctypes.CDLL(str(library)))
    except OSError:
        return False  # the bindings' own import reports a build that cannot load, with its fix
    return True


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
