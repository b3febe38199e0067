"""`rag doctor` loads the generator in a child process: a build that crashes is reported with the
signal and a fix, and doctor itself goes on."""

from __future__ import annotations

import sys
from pathlib import Path

from raggity.api.doctor import run_checks
from raggity.api.generator_check import GPU_CRASH_FIX, NAME, generator_checks, interpret
from raggity.config.loader import load_config
from raggity.config.schema import Config
from tests.support import write_config


def _config(tmp_path: Path) -> Config:
    return load_config(write_config(tmp_path))


def _segfaulting_child(config: Config, gguf: Path) -> list[str]:
    """A real child process that dies of SIGSEGV, as the GPU build did while loading."""
    return [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]


def test_the_real_generator_loads_and_decodes_in_a_child(tmp_path: Path) -> None:
    [check] = generator_checks(_config(tmp_path))
    assert check.name == NAME
    assert check.ok, check
    assert check.message.startswith("loaded on CPU in ")  # this build has no GPU offload


def test_a_child_that_crashes_is_reported_with_its_signal(tmp_path: Path) -> None:
    [check] = generator_checks(_config(tmp_path), command=_segfaulting_child)
    assert not check.ok
    assert "SIGSEGV" in check.message
    assert check.fix  # a crash always comes with what to do


def test_a_crash_with_gpu_offload_names_the_gpu_fix() -> None:
    check = interpret(-11, "", "", gpu=True)
    assert "SIGSEGV" in check.message
    assert check.fix == GPU_CRASH_FIX
    assert "gpu_layers = 0" in check.fix


def test_a_model_that_does_not_load_gives_its_error_line(tmp_path: Path) -> None:
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf" * 100)
    config = load_config(write_config(tmp_path, generation={"model_path": str(junk)}))
    [check] = generator_checks(config)
    assert not check.ok
    assert "cannot load GGUF model" in check.message
    assert "exit 1" in check.message


def test_doctor_runs_the_check(tmp_path: Path) -> None:
    names = [check.name for check in run_checks(_config(tmp_path))]
    assert NAME in names
