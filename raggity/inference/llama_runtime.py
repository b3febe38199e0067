"""Loads llama.cpp's Python bindings with sleeping worker threads, and says what the build can offload."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from raggity.core.errors import ModelError
from raggity.inference.elf_symbols import exports_definition

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


# A llama.cpp whose libraries carry their own copy of the C++ runtime (libstdc++ linked statically,
# its symbols exported) is a second C++ runtime beside the libstdc++.so.6 that numpy, pyarrow and
# onnxruntime load, and the dynamic loader binds some symbols across the two (the locale facets' ids,
# STB_GNU_UNIQUE) whatever mode the library is opened in: LD_DEBUG=bindings shows the same bindings
# under RTLD_LOCAL as under RTLD_GLOBAL. Seen on a GPU machine whose build linked libstdc++
# statically (issue 43; docs/models.md, "The CUDA build and the C++ runtime"): with numpy imported
# first, SIGSEGV in libggml-cuda's own `ostream << long` while the model loads; with llama.cpp's
# library opened first (by ctypes, RTLD_LOCAL), `rag ask` aborted in pyarrow's import with
# "free(): invalid pointer". No import order works, so such a build is refused, with its fix,
# before it is loaded. The check reads the libraries' dynamic symbol tables and loads none of them:
# opening one was enough for that abort, and `rag doctor` must name the build, not die of it.
# std::locale::classic(): defined by the C++ runtime alone, and used by every stream.
_RUNTIME_SYMBOL = b"_ZNSt6locale7classicEv"
# `make install` would not replace it: pip keeps an installed build of the pinned version.
CPU_REINSTALL = ".venv/bin/pip install --force-reinstall --no-cache-dir --no-deps llama-cpp-python==0.3.36"
# The same compiler would link a CPU rebuild the same way, so the fix names the runtime on the link
# lines whatever the backend (docs/models.md, "Running on a GPU", gives the whole CUDA command).
REBUILD_FIX = (
    'rebuild it with the shared runtime named: CMAKE_ARGS="<your backend flags> '
    "-DCMAKE_CXX_STANDARD_LIBRARIES=$(g++ -print-file-name=libstdc++.so.6) "
    '-DCMAKE_CUDA_STANDARD_LIBRARIES=$(g++ -print-file-name=libstdc++.so.6)" '
    f"{CPU_REINSTALL} (docs/models.md, 'Running on a GPU')"
)
# The names llama_cpp's own loader tries, in its order (llama_cpp/_ctypes_extensions.py).
_NATIVE_NAMES = {
    "linux": ("libllama.so",),
    "darwin": ("libllama.so", "libllama.dylib"),
    "win32": ("llama.dll", "libllama.dll"),
}


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


def private_cxx_runtime(library: Path) -> Path | None:
    """The file among llama.cpp's libraries (`library` and the ggml libraries beside it) that exports
    its own copy of libstdc++; None where none does (they use the shared libstdc++.so.6, another
    runtime such as libc++, or keep their copy hidden). Each file is read, none loaded. The ggml
    libraries are read one by one because a backend such as libggml-cuda.so is only a dependency of
    a dependency of libllama.so, behind libstdc++.so.6 in the loader's search order."""
    if not sys.platform.startswith("linux"):
        return None
    siblings = sorted(path for path in library.parent.glob("libggml*.so") if path.name != library.name)
    return next((path for path in (library, *siblings) if exports_definition(path, _RUNTIME_SYMBOL)), None)


def bindings() -> Any:
    """The `llama_cpp` module, its OpenMP runtime told to let idle threads sleep."""
    os.environ.update(sleeping_threads_environment(dict(os.environ)))
    library = native_library()
    owner = private_cxx_runtime(library) if library is not None else None
    if owner is not None:
        raise ModelError(
            f"llama.cpp's library {owner} carries its own copy of the C++ runtime (libstdc++ linked "
            "statically), which can crash beside numpy and pyarrow",
            REBUILD_FIX,
        )
    try:
        import llama_cpp  # noqa: PLC0415 - loads the runtime on first use
    except (ImportError, OSError, RuntimeError) as exc:  # its loader raises the last two for its library
        override = os.environ.get("LLAMA_CPP_LIB_PATH")
        fix = f"point LLAMA_CPP_LIB_PATH ({override}) at a working build, or unset it" if override else ""
        raise ModelError(
            f"llama-cpp-python is not importable: {exc}", fix or f"reinstall it: {CPU_REINSTALL}"
        ) from exc
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
