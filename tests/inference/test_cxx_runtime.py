"""A llama.cpp that carries its own copy of the C++ runtime is refused before it is loaded (issue 43).

On a GPU machine whose compiler linked libstdc++ statically, llama.cpp's libraries held their own
copies of the runtime: with numpy imported first, the model load died of SIGSEGV inside
libggml-cuda's copy of `ostream << long`; with llama.cpp's library opened first, pyarrow's import
aborted ("free(): invalid pointer"). These tests build real C++ libraries with the machine's g++,
both ways, and read them as raggity reads llama.cpp's (raggity/inference/llama_runtime.py;
docs/models.md, "The CUDA build and the C++ runtime").
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from raggity.api.generator_check import NAME, generator_checks
from raggity.config.loader import load_config
from raggity.inference.llama_runtime import native_library, private_cxx_runtime
from tests.support import rag, write_config

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="libstdc++ is Linux's runtime")

SOURCE = """
#include <sstream>
extern "C" long describe(long value) {
    std::ostringstream out;
    out << "n_layer = " << value;
    return static_cast<long>(out.str().size());
}
"""


# libggml.so's stand-in: plain C++ that calls the backend below it.
CALLER = """
extern "C" long describe(long value);
extern "C" long forward(long value) { return describe(value); }
"""
# libllama.so's stand-in: it uses the streams itself, from the shared runtime.
DESCRIBER = """
#include <sstream>
extern "C" long forward(long value);
extern "C" long describe_model(long value) {
    std::ostringstream out;
    out << value;
    return forward(value) + static_cast<long>(out.str().size());
}
"""


def _library(
    folder: Path, name: str, *flags: str, libraries: tuple[str, ...] = (), source: str = SOURCE
) -> Path:
    """A shared library of SOURCE, linked by g++ with `flags`, `libraries` after the source as CMake
    puts a target's libraries."""
    folder.mkdir(parents=True, exist_ok=True)
    code = folder / f"{name}.cpp"
    code.write_text(source, encoding="utf-8")
    target = folder / name
    subprocess.run(
        ["g++", "-O1", "-fPIC", "-shared", *flags, str(code), *libraries, "-o", str(target)], check=True
    )
    return target


def test_a_library_linked_with_a_static_libstdcxx_is_named(tmp_path: Path) -> None:
    private = _library(tmp_path / "static", "libdescribe.so", "-static-libstdc++")
    assert private_cxx_runtime(private) == private


def test_a_copy_kept_hidden_is_not_named(tmp_path: Path) -> None:
    # Linked with its runtime's symbols kept local, the copy binds to nothing outside the library.
    hidden = _library(tmp_path / "hidden", "libdescribe.so", "-static-libstdc++", "-Wl,--exclude-libs,ALL")
    assert private_cxx_runtime(hidden) is None


def test_a_backend_that_carries_a_copy_behind_the_shared_runtime_is_named(tmp_path: Path) -> None:
    # llama.cpp's layout: libllama.so needs libggml.so and libstdc++.so.6, and libggml.so needs the
    # backends. A backend with its own copy sits behind libstdc++.so.6 in libllama.so's search order,
    # so asking the loader about libllama.so alone finds the shared runtime first.
    folder = tmp_path / "lib"
    cuda = _library(folder, "libggml-cuda.so", "-static-libstdc++")
    rpath = "-Wl,-rpath,$ORIGIN"
    _library(folder, "libggml.so", rpath, libraries=(f"-L{folder}", "-lggml-cuda"), source=CALLER)
    llama = _library(folder, "libllama.so", rpath, libraries=(f"-L{folder}", "-lggml"), source=DESCRIBER)
    assert private_cxx_runtime(llama) == cuda


def test_the_check_loads_no_library(tmp_path: Path) -> None:
    # Opening such a library is enough to mix the runtimes (issue 43: ctypes opened libllama.so and
    # pyarrow's import then aborted), so the check only reads the files.
    private = _library(tmp_path / "static", "libdescribe.so", "-static-libstdc++")
    assert private_cxx_runtime(private) == private
    assert str(private) not in Path("/proc/self/maps").read_text(encoding="utf-8")


def test_a_library_on_the_shared_runtime_passes(tmp_path: Path) -> None:
    shared = _library(tmp_path / "shared", "libdescribe.so")
    assert private_cxx_runtime(shared) is None


def test_the_fix_in_the_docs_turns_a_static_link_into_a_shared_one(tmp_path: Path) -> None:
    # docs/models.md names the shared runtime among every target's libraries
    # (CMAKE_CXX_STANDARD_LIBRARIES); with it, even -static-libstdc++ leaves the runtime in
    # libstdc++.so.6. Placed before the source it would not: the order is the fix.
    runtime = subprocess.run(
        ["g++", "-print-file-name=libstdc++.so.6"], capture_output=True, text=True, check=True
    ).stdout.strip()
    fixed = _library(tmp_path / "fixed", "libdescribe.so", "-static-libstdc++", libraries=(runtime,))
    assert private_cxx_runtime(fixed) is None


def test_the_installed_llama_cpp_uses_the_shared_runtime() -> None:
    library = native_library()
    assert library is not None
    assert library.name == "libllama.so"
    assert private_cxx_runtime(library) is None


def test_doctor_refuses_such_a_llama_cpp_with_the_file_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # llama_cpp's own loader reads LLAMA_CPP_LIB_PATH; so does raggity's check, before the bindings load.
    _library(tmp_path / "lib", "libllama.so", "-static-libstdc++")
    monkeypatch.setenv("LLAMA_CPP_LIB_PATH", str(tmp_path / "lib"))
    [check] = generator_checks(load_config(write_config(tmp_path / "project")))
    assert check.name == NAME
    assert not check.ok
    assert str(tmp_path / "lib" / "libllama.so") in check.message
    assert "own copy of the C++ runtime" in check.message
    assert "docs/models.md" in check.fix


def test_a_lib_path_without_a_working_library_is_one_line_with_the_variable(tmp_path: Path) -> None:
    # llama_cpp's loader raises FileNotFoundError or RuntimeError, not ImportError, for the library
    # it cannot open; a fresh process, since this one may have imported llama_cpp already.
    (tmp_path / "lib").mkdir()
    project = write_config(tmp_path / "project").parent
    done = rag("doctor", cwd=project, env={**os.environ, "LLAMA_CPP_LIB_PATH": str(tmp_path / "lib")})
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    [line] = [line for line in done.stdout.splitlines() if "generator run" in line]
    assert "llama-cpp-python is not importable" in line
    assert f"LLAMA_CPP_LIB_PATH ({tmp_path / 'lib'})" in done.stdout
