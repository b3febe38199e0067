"""`rag models pull`: download a model into the models folder (resumable, checksum-verified)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from raggity.models.download import download_all, resolve_pull_spec
from raggity.models.registry import models_home


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
