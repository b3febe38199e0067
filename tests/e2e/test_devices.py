"""`rag status` and `rag doctor` say which device runs each model and why; this build is CPU-only."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from raggity.cli.main import app
from raggity.inference.cpu_budget import process_budget
from raggity.inference.devices import embedder_placement, generator_placement
from tests.support import write_config

CPUS = process_budget().threads


def _run(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(app, list(args))
    return done.exit_code, done.stdout


def test_status_says_plainly_that_this_build_runs_both_models_on_the_cpu(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    code, output = _run("status", "-c", str(config))
    assert code == 0, output
    generator = re.search(r"^generator device: +(.*)$", output, re.MULTILINE)
    embedder = re.search(r"^embedder device: +(.*)$", output, re.MULTILINE)
    assert generator is not None, output
    assert embedder is not None, output
    assert generator.group(1).startswith(f"CPU, {CPUS} thread")
    assert "this llama-cpp-python build has no GPU offload (GPU builds: docs/models.md)" in generator.group(1)
    assert embedder.group(1).startswith(f"CPU, {CPUS} thread")
    assert "this onnxruntime has no GPU provider" in embedder.group(1)


def test_status_json_lists_the_devices(tmp_path: Path) -> None:
    config = write_config(tmp_path, generation={"threads": 1, "gpu_layers": 0})
    code, output = _run("status", "--json", "-c", str(config))
    assert code == 0, output
    devices = {d["role"]: d for d in json.loads(output)["devices"]}
    assert devices["generator"]["device"] == "CPU, 1 thread"
    assert devices["generator"]["why"] == "[generation] gpu_layers = 0; [generation] threads = 1"


def test_doctor_fails_on_a_provider_this_onnxruntime_lacks(tmp_path: Path) -> None:
    config = write_config(tmp_path, embedding={"providers": ["CUDAExecutionProvider"]})
    code, output = _run("doctor", "-c", str(config))
    assert code == 1
    assert "FAIL device: embedder: none: [embedding] providers: CUDAExecutionProvider not available" in output


def test_doctor_names_the_layers_asked_for_on_a_build_without_offload(tmp_path: Path) -> None:
    config = write_config(tmp_path, generation={"gpu_layers": 20})
    _, output = _run("doctor", "-c", str(config))
    assert "ok   device: generator: CPU, " in output
    assert "[generation] gpu_layers = 20, but this llama-cpp-python build has no GPU offload" in output


def test_a_gpu_build_reports_the_gpu_and_why() -> None:
    assert generator_placement(-1, 0, offload_supported=True).device == "GPU, all layers"
    partial = generator_placement(12, 2, offload_supported=True)
    assert partial.device == "GPU, 12 layers; the rest on CPU, 2 threads"
    cuda = embedder_placement([], 0, ["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert (cuda.device, cuda.why) == ("CUDAExecutionProvider", "auto, and onnxruntime has it")
