"""A process that will generate opens llama.cpp's native library before numpy's (issue 43).

A CUDA build of llama-cpp-python crashed while loading a model whenever numpy had been imported
first, and ran with llama.cpp first (raggity/inference/llama_runtime.py). These tests read the order
the dynamic loader ran the libraries' initialisers in (LD_DEBUG=files), in real child processes:
they fail if a generating command lets numpy's OpenBLAS load before llama.cpp.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import CHECKOUT, rag, this_checkout

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_DEBUG is glibc's")


def _initialised(stderr: str) -> list[str]:
    """File names of the shared libraries whose initialisers ran, in order."""
    marker = "calling init: "
    return [line.split(marker, 1)[1].rsplit("/", 1)[-1] for line in stderr.splitlines() if marker in line]


def _position(names: list[str], prefix: str) -> int:
    found = [i for i, name in enumerate(names) if name.startswith(prefix)]
    assert found, f"{prefix} never loaded: {names}"
    return found[0]


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    return {**env, "LD_DEBUG": "files", "OMP_DISPLAY_ENV": "VERBOSE"}


@pytest.mark.parametrize("command", ["ask", "chat", "eval"])
def test_a_generating_command_loads_llama_before_numpy(tmp_path: Path, command: str) -> None:
    # No index here: each command imports its whole path (numpy included) and then stops with an
    # error, which is enough to see the order its libraries were loaded in.
    args = [command, "Where is the password kept?"] if command == "ask" else [command]
    done = rag(*args, cwd=tmp_path, env=_environment())
    names = _initialised(done.stderr)
    numpy_blas = [i for i, name in enumerate(names) if name.startswith("libscipy_openblas")]
    assert all(_position(names, "libllama") < i for i in numpy_blas), names
    if command == "ask":  # its path imports numpy before it finds there is no index
        assert numpy_blas
    # Loaded early, the OpenMP runtime still got the sleeping-threads policy (it reads it once).
    assert "GOMP_SPINCOUNT = '0'" in done.stderr


def test_a_command_that_never_generates_does_not_load_llama(tmp_path: Path) -> None:
    done = rag("search", "password", cwd=tmp_path, env=_environment())
    assert not any(name.startswith("libllama") for name in _initialised(done.stderr))


def _child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        env=this_checkout(_environment()),
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_api_call_puts_llama_first_and_says_when_it_is_too_late() -> None:
    first = _child(
        "from raggity.api.generation_process import prepare_to_generate\n"
        "print(prepare_to_generate())\n"
        "from raggity.api.session import Raggity\n"
    )
    assert first.stdout.strip() == "True", first.stderr[-2000:]
    names = _initialised(first.stderr)
    assert _position(names, "libllama") < _position(names, "libscipy_openblas")

    late = _child(
        "import numpy\n"
        "from raggity.api.generation_process import prepare_to_generate\n"
        "print(prepare_to_generate())\n"
    )
    assert late.stdout.strip() == "False", late.stderr[-2000:]
    assert not any(name.startswith("libllama") for name in _initialised(late.stderr))
