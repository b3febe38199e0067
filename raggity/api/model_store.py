"""`rag models pull`, `add` and `list`: models downloaded, added from a file, or found in Ollama's store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from raggity.config.schema import Config
from raggity.evaluation.calibration_store import read_model_calibration
from raggity.models.added import AddedModel, add_gguf, check_gguf
from raggity.models.catalog import generator_catalog
from raggity.models.download import download_all, resolve_pull_spec
from raggity.models.ollama import ollama_home
from raggity.models.registry import hash_cache, models_home
from raggity.pipeline.answer.answerability import CALIBRATED


@dataclass(frozen=True)
class PulledModel:
    """Where a pulled model was saved, and the name a config uses for it."""

    path: Path
    name: str


def pull_model(
    name_or_url: str,
    *,
    name: str | None = None,
    progress: Callable[[int, int | None], None] | None = None,
) -> PulledModel:
    """`name_or_url`: a hub repo id, a known short name, or a URL of a .gguf file. Saved under the
    models folder as `name` (default: the last part of `name_or_url`). Needs network access."""
    items = resolve_pull_spec(name_or_url)
    folder = name or name_or_url.rstrip("/").split("/")[-1].removesuffix(".gguf")
    path = download_all(items, models_home() / folder, progress=progress)
    return PulledModel(path, folder)


def add_model(path: Path, *, name: str | None = None, copy: bool = False) -> AddedModel:
    """`rag models add`: the GGUF at `path` under a name `[generation] model` takes, hashed now
    (once: the hash cache remembers it) and checked against that hash on every load."""
    real = check_gguf(path)
    return add_gguf(real, models_home(), digest=hash_cache().digest(real), name=name, copy=copy)


@dataclass(frozen=True)
class GeneratorListing:
    """One row of `rag models list`."""

    name: str
    source: str
    path: str
    size: int
    sha256: str
    present: bool
    selected: bool
    # "calibrated 2026-11-26, n=800 (...)", "shipped calibration", or "uncalibrated: ...".
    calibration: str
    note: str = ""


def list_generators(config: Config) -> list[GeneratorListing]:
    """Every generator the config could name, the configured one marked, each with its calibration."""
    selected = config.generation.model_path or config.generation.model
    return [
        GeneratorListing(
            entry.name,
            entry.source,
            entry.path,
            entry.size,
            entry.sha256,
            entry.present,
            entry.name == selected,
            _calibration(entry.name, entry.sha256),
            entry.note,
        )
        for entry in generator_catalog(models_home(), ollama_home())
    ]


def _calibration(name: str, sha256: str) -> str:
    calibration = read_model_calibration(sha256) if sha256 else None
    if calibration is not None:
        return calibration.summary()
    if name in CALIBRATED:
        return "shipped calibration"
    return f"uncalibrated: run `rag calibrate --model {name}`"
