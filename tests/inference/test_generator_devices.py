"""The thread count, GPU layers and OpenMP wait policy reach llama.cpp as configured (a real GGUF)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import llama_cpp

from raggity.config.schema import GenerationConfig
from raggity.inference.cpu_budget import process_budget
from raggity.inference.generator import LlamaGenerator
from raggity.inference.llama_runtime import gpu_layers_to_use, sleeping_threads_environment
from raggity.models.registry import resolve_generator
from tests.support import CHECKOUT

SMALL = "smollm2-135m-instruct"


def _gguf() -> Path:
    return resolve_generator(GenerationConfig(model=SMALL), Path(".")).gguf


def test_configured_threads_reach_both_decoding_and_the_prompt() -> None:
    """llama-cpp-python gives the prompt (batch) every CPU of the machine unless told otherwise."""
    generator = LlamaGenerator(_gguf(), identity=SMALL, threads=1, context_size=512)
    assert generator.threads == 1
    assert generator._llm.context_params.n_threads == 1
    assert generator._llm.context_params.n_threads_batch == 1


def test_auto_threads_are_the_process_budget() -> None:
    generator = LlamaGenerator(_gguf(), identity=SMALL, threads=0, context_size=512)
    assert generator.threads == process_budget().threads
    assert generator._llm.context_params.n_threads_batch == process_budget().threads


def test_this_cpu_only_build_offloads_nothing_by_default() -> None:
    generator = LlamaGenerator(_gguf(), identity=SMALL, threads=1, context_size=512)
    assert generator.gpu_offload_supported is False
    assert generator.gpu_layers == 0
    assert generator._llm.model_params.n_gpu_layers == 0


def test_weights_are_read_into_memory_not_mapped() -> None:
    """Mapped, the file's pages stayed resident beside llama.cpp's repacked copy of the weights."""
    generator = LlamaGenerator(_gguf(), identity=SMALL, threads=1, context_size=512)
    assert generator._llm.model_params.load_mode == llama_cpp.LLAMA_LOAD_MODE_NONE
    assert "".join(generator.stream([{"role": "user", "content": "Hi"}], max_tokens=2, temperature=0.0))


def test_a_configured_layer_count_is_passed_as_it_is() -> None:
    generator = LlamaGenerator(_gguf(), identity=SMALL, threads=1, context_size=512, gpu_layers=7)
    assert generator.gpu_layers == 7
    assert generator._llm.model_params.n_gpu_layers == 7
    assert generator._llm.context_params.n_ubatch == 512  # a device's buffers: llama.cpp's default


def test_on_the_cpu_the_micro_batch_is_small() -> None:
    """Its compute buffer holds a micro-batch's logits over the whole vocabulary (306 MB at 512 for
    the 1.5B model); the batch itself stays whole."""
    generator = LlamaGenerator(_gguf(), identity=SMALL, threads=1, context_size=512, gpu_layers=0)
    assert generator._llm.context_params.n_ubatch == 128
    assert generator._llm.context_params.n_batch == 512


def test_auto_gpu_layers_are_all_where_the_build_offloads() -> None:
    assert gpu_layers_to_use(-1, supported=True) == -1  # llama.cpp's "every layer"
    assert gpu_layers_to_use(-1, supported=False) == 0
    assert gpu_layers_to_use(0, supported=True) == 0
    assert gpu_layers_to_use(12, supported=False) == 12


def _openmp_spin_count(environ: dict[str, str]) -> str:
    """GOMP_SPINCOUNT as the OpenMP runtime inside llama.cpp set it up, once a generator is loaded
    (OMP_DISPLAY_ENV makes the runtime print its settings when it starts)."""
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from raggity.inference.generator import LlamaGenerator\n"
        "LlamaGenerator(Path(sys.argv[1]), identity='small', threads=1, context_size=512)\n"
    )
    env = {**environ, "OMP_DISPLAY_ENV": "VERBOSE", "PYTHONPATH": str(CHECKOUT)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(_gguf())], env=env, capture_output=True, text=True, check=True
    )
    lines = [line for line in done.stderr.splitlines() if "GOMP_SPINCOUNT" in line]
    assert lines, done.stderr[-2000:]
    return lines[0].split("=", 1)[1].strip().strip("'")


def test_llama_threads_sleep_at_barriers_instead_of_spinning() -> None:
    environ = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    assert _openmp_spin_count(environ) == "0"


def test_a_users_own_wait_policy_wins() -> None:
    environ = {k: v for k, v in os.environ.items() if k != "GOMP_SPINCOUNT"}
    assert _openmp_spin_count({**environ, "OMP_WAIT_POLICY": "ACTIVE"}) != "0"
    assert sleeping_threads_environment({"GOMP_SPINCOUNT": "1000"}) == {}
