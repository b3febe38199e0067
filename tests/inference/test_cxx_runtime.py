"""A llama.cpp that carries its own copy of the C++ runtime is refused before it is loaded (issue 43).

On a GPU machine whose compiler linked libstdc++ statically, every llama.cpp library held an exported
copy of the runtime: with numpy imported first, the model load died of SIGSEGV inside that copy's
`ostream << long`; with llama.cpp first, pyarrow's import aborted ("free(): invalid pointer").
These tests build real one-function C++ libraries with the machine's g++, both ways, and read them
as raggity reads llama.cpp's (raggity/inference/llama_runtime.py; docs/models.md, "Running on a GPU").
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from raggity.api.generator_check import NAME, generator_checks
from raggity.config.loader import load_config
from raggity.inference.llama_runtime import native_library, private_cxx_runtime
from tests.support import write_config

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="libstdc++ is Linux's runtime")

SOURCE = """
#include <sstream>
extern "C" long describe(long value) {
    std::ostringstream out;
    out << "n_layer = " << value;
    return static_cast<long>(out.str().size());
}
"""


def _library(folder: Path, name: str, *flags: str, libraries: tuple[str, ...] = ()) -> Path:
    """A shared library of SOURCE, linked by g++ with `flags`, `libraries` after the source as CMake
    puts a target's libraries."""
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "describe.cpp"
    source.write_text(SOURCE, encoding="utf-8")
    target = folder / name
    subprocess.run(
        ["g++", "-O1", "-fPIC", "-shared", *flags, str(source), *libraries, "-o", str(target)], check=True
    )
    return target


def test_a_library_linked_with_a_static_libstdcxx_is_named(tmp_path: Path) -> None:
    private = _library(tmp_path / "static", "libdescribe.so", "-static-libstdc++")
    assert private_cxx_runtime(private) == private


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
