"""ONNX Runtime execution providers: a GPU one where the build has it, the CPU otherwise, as the real
session reports them; a provider the build lacks is a one-line error naming the key."""

from __future__ import annotations

from typing import Any

import onnxruntime as ort
import pytest

from raggity.config.schema import EmbeddingConfig
from raggity.core.errors import ModelError
from raggity.inference.embedder import OnnxEmbedder
from raggity.inference.onnx_session import choose_providers


@pytest.fixture(scope="module")
def model_files(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from raggity.models.registry import resolve_embedder  # noqa: PLC0415 - keeps the fixture's imports local

    return resolve_embedder(EmbeddingConfig(), tmp_path_factory.mktemp("base"))


def _embedder(files: Any, providers: list[str]) -> OnnxEmbedder:
    return OnnxEmbedder(files.onnx, files.tokenizer, identity="e", threads=1, providers=providers)


def test_this_cpu_only_build_runs_the_embedder_on_the_cpu(model_files: Any) -> None:
    assert "CUDAExecutionProvider" not in ort.get_available_providers()  # no GPU build here
    assert _embedder(model_files, []).providers == ["CPUExecutionProvider"]


def test_named_providers_reach_the_session(model_files: Any) -> None:
    assert _embedder(model_files, ["CPUExecutionProvider"]).providers == ["CPUExecutionProvider"]


def test_a_provider_the_build_lacks_is_an_error_naming_the_key(model_files: Any) -> None:
    with pytest.raises(ModelError) as raised:
        _embedder(model_files, ["CUDAExecutionProvider"])
    assert raised.value.message.startswith("[embedding] providers: CUDAExecutionProvider not available")
    assert "docs/models.md" in raised.value.hint


def test_auto_prefers_the_first_gpu_provider_the_build_lists() -> None:
    cuda_build = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
    assert choose_providers([], cuda_build) == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    mac_build = ["CoreMLExecutionProvider", "AzureExecutionProvider", "CPUExecutionProvider"]
    assert choose_providers([], mac_build) == ["CoreMLExecutionProvider", "CPUExecutionProvider"]
    directml_build = ["DmlExecutionProvider", "CPUExecutionProvider"]
    assert choose_providers([], directml_build) == ["DmlExecutionProvider", "CPUExecutionProvider"]
    assert choose_providers([], ["CPUExecutionProvider"]) == ["CPUExecutionProvider"]


def test_named_providers_keep_their_order_and_end_on_the_cpu() -> None:
    build = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
    assert choose_providers(["TensorrtExecutionProvider", "CUDAExecutionProvider"], build) == [
        "TensorrtExecutionProvider",
        "CUDAExecutionProvider",
        "CPUExecutionProvider",
    ]
