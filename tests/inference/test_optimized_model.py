"""ONNX sessions load an optimised copy of the model kept in the cache folder: the same outputs to
the bit as the original model's, written once, and any broken or unwritable entry only costs the
optimisation (raggity.inference.optimized_model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest

from raggity.config.schema import EmbeddingConfig
from raggity.core.errors import ModelError
from raggity.inference.onnx_session import create_session
from raggity.inference.optimized_model import GRAPH, SIZES, WEIGHTS
from raggity.models.registry import resolve_embedder


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return resolve_embedder(EmbeddingConfig(), tmp_path_factory.mktemp("base")).onnx


def outputs(session: Any) -> list[np.ndarray[Any, Any]]:
    """The model's hidden states for batches of several widths, padding included."""
    rng = np.random.default_rng(7)
    found = []
    for width in (5, 31, 128):
        ids = rng.integers(1000, 20000, size=(3, width)).astype(np.int64)
        mask = np.ones_like(ids)
        mask[1, width // 2 :] = 0
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(mask)}
        found.append(session.run(None, feeds)[0])
    return found


@pytest.fixture(scope="module")
def original(model: Path) -> list[np.ndarray[Any, Any]]:
    """What the model gives loaded as it ships, optimised in the session (the code before the cache)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = 1
    return outputs(ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"]))


def entries(cache: Path) -> list[Path]:
    return sorted(cache.iterdir()) if cache.exists() else []


def same(found: list[np.ndarray[Any, Any]], expected: list[np.ndarray[Any, Any]]) -> bool:
    return all(a.tobytes() == b.tobytes() for a, b in zip(found, expected, strict=True))


def test_the_optimised_copy_gives_the_original_outputs_bit_for_bit_and_is_written_once(
    model: Path, original: list[np.ndarray[Any, Any]], tmp_path: Path
) -> None:
    cache = tmp_path / "onnx"
    assert same(outputs(create_session(model, threads=1, optimized=cache)), original)
    [entry] = entries(cache)
    assert {p.name for p in entry.iterdir()} == {GRAPH, WEIGHTS, SIZES}
    # The folded float weights live beside the graph, not inside it.
    assert (entry / WEIGHTS).stat().st_size > (entry / GRAPH).stat().st_size * 100
    written = (entry / WEIGHTS).stat().st_ino

    assert same(outputs(create_session(model, threads=1, optimized=cache)), original)
    assert entries(cache) == [entry]
    assert (entry / WEIGHTS).stat().st_ino == written  # loaded, not written again


def test_a_truncated_entry_is_written_again(
    model: Path, original: list[np.ndarray[Any, Any]], tmp_path: Path
) -> None:
    cache = tmp_path / "onnx"
    create_session(model, threads=1, optimized=cache)
    [entry] = entries(cache)
    with (entry / WEIGHTS).open("r+b") as handle:
        handle.truncate(1000)

    assert same(outputs(create_session(model, threads=1, optimized=cache)), original)
    assert entries(cache) == [entry]
    sizes = json.loads((entry / SIZES).read_text(encoding="utf-8"))
    assert (entry / WEIGHTS).stat().st_size == sizes[WEIGHTS] > 1000


def test_an_entry_onnx_runtime_cannot_load_falls_back_to_the_original_and_goes(
    model: Path, original: list[np.ndarray[Any, Any]], tmp_path: Path
) -> None:
    cache = tmp_path / "onnx"
    create_session(model, threads=1, optimized=cache)
    [entry] = entries(cache)
    # Not a model, at the recorded size: only loading it can tell.
    size = (entry / GRAPH).stat().st_size
    (entry / GRAPH).write_bytes(b"\xff" * size)

    assert same(outputs(create_session(model, threads=1, optimized=cache)), original)
    assert entries(cache) == []


def test_an_unwritable_cache_folder_only_costs_the_optimisation(
    model: Path, original: list[np.ndarray[Any, Any]], tmp_path: Path
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    assert same(outputs(create_session(model, threads=1, optimized=blocked / "onnx")), original)
    assert blocked.read_text(encoding="utf-8") == "not a folder"


def test_a_model_that_is_not_onnx_is_still_a_one_line_error_and_leaves_no_entry(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not a model")
    cache = tmp_path / "onnx"
    with pytest.raises(ModelError, match="cannot load ONNX model"):
        create_session(bad, threads=1, optimized=cache)
    assert entries(cache) == []


def test_writing_an_entry_removes_the_same_models_copies_for_other_runtimes_and_keeps_other_models(
    model: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "onnx"
    create_session(model, threads=1, optimized=cache)
    [entry] = entries(cache)
    digest = entry.name.split("-ort")[0]
    # What an earlier ONNX Runtime left, and another model's entry.
    older = cache / f"{digest}-ort1.0.0-v1"
    other = cache / f"{'0' * 32}-ort{ort.__version__}-v1"
    for folder in (older, other):
        folder.mkdir()
        (folder / GRAPH).write_bytes(b"x")
    for name in (GRAPH, WEIGHTS, SIZES):
        (entry / name).unlink()  # this runtime's entry is written again

    create_session(model, threads=1, optimized=cache)
    assert entries(cache) == sorted([entry, other])
