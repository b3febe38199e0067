"""`rag models add PATH.gguf`: a GGUF of your own, given a name, hashed once and pinned.

The model gets a folder in the models folder, as `rag models pull` makes one: a link to the file
(or, with `copy`, a copy of it) and raggity-model.json with its size and SHA-256. Each load checks
the file against that hash (through the hash cache, so an unchanged file is not read again), so a
model replaced or truncated after it was added is refused, never used under the old name.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from raggity.core.atomic_file import atomic_write_text, fsync_dir
from raggity.core.errors import ModelError, os_reason
from raggity.models.download import MANIFEST_NAME
from raggity.models.ollama import GGUF_MAGIC, is_ollama_name
from raggity.models.packaged import GENERATORS

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass(frozen=True)
class AddedModel:
    name: str  # what `[generation] model` takes
    folder: Path
    gguf: Path
    sha256: str
    size: int


def check_gguf(path: Path) -> Path:
    """`path` resolved, if it is a readable regular file that starts with GGUF's magic bytes."""
    try:
        real = path.expanduser().resolve(strict=True)
        with real.open("rb") as handle:
            magic = handle.read(len(GGUF_MAGIC))
    except FileNotFoundError as exc:
        raise ModelError(f"{path}: no such file", "give the path of a .gguf file") from exc
    except OSError as exc:
        raise ModelError(
            f"{path}: cannot read it: {os_reason(exc)}", "give the path of a .gguf file"
        ) from exc
    if not real.is_file() or magic != GGUF_MAGIC:
        raise ModelError(f"{path}: not a GGUF file", "give the path of a .gguf file that llama.cpp can load")
    return real


def model_name(path: Path, name: str | None) -> str:
    chosen = name if name is not None else path.name.removesuffix(".gguf")
    if not _NAME.fullmatch(chosen) or ".." in chosen:
        raise ModelError(
            f"{chosen!r} cannot name a model",
            "choose a name of letters, digits, '.', '_' and '-' with --name",
        )
    if chosen in GENERATORS or is_ollama_name(chosen):
        raise ModelError(f"{chosen!r} is a packaged model's name", "choose another with --name")
    return chosen


def add_gguf(
    path: Path, models: Path, *, digest: str, name: str | None = None, copy: bool = False
) -> AddedModel:
    """Adds the GGUF at `path` (checked with `check_gguf`, hashed by the caller: `digest`) under
    `models/<name>`. Refuses a name already taken."""
    real = check_gguf(path)
    chosen = model_name(path, name)
    folder = models / chosen
    if folder.exists() or folder.is_symlink():
        raise ModelError(f"{folder} already exists", f"choose another name with --name, or remove {folder}")
    partial = models / f".{chosen}.adding"
    shutil.rmtree(partial, ignore_errors=True)
    target = partial / real.name if real.name.endswith(".gguf") else partial / f"{chosen}.gguf"
    try:
        partial.mkdir(parents=True)
        if copy:
            shutil.copyfile(real, target)
        else:
            os.symlink(real, target)
        size = real.stat().st_size
        record = {"path": target.name, "url": real.as_uri(), "size": size, "sha256": digest}
        atomic_write_text(
            partial / MANIFEST_NAME,
            json.dumps({"format": 1, "source": str(real), "files": [record]}, indent=2) + "\n",
        )
        os.rename(partial, folder)
        fsync_dir(models)
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise ModelError(
            f"cannot add {path} to {models}: {os_reason(exc)}", "check the models folder"
        ) from exc
    return AddedModel(chosen, folder, folder / target.name, digest, size)


def added_source(folder: Path) -> str | None:
    """The file a folder made by `add_gguf` links to or copied, or None for a pulled folder."""
    try:
        data = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    source = data.get("source") if isinstance(data, dict) else None
    return str(source) if isinstance(source, str) else None
