"""Models in Ollama's store, used where they already are: `[generation] model = "ollama:qwen2.5:7b"`.

Ollama keeps a manifest per model and tag under `manifests/<host>/<namespace>/<model>/<tag>` (JSON:
an OCI-style image manifest) and every layer as `blobs/sha256-<hex>`, named by its own SHA-256. The
layer whose mediaType is `application/vnd.ollama.image.model` is the GGUF. The store is
`$OLLAMA_MODELS`, else `~/.ollama/models`.

Everything read here is checked: the name may not step outside the store, the manifest must be
JSON with one model layer, the blob must stay inside the store's blobs folder (a symbolic link out of
it is refused), start with GGUF's magic bytes, and hash to the digest its name claims. The hash is
computed once and remembered by path, size and mtime (raggity/models/hashing.py), so a 4.7 GB model
is read whole only the first time: pinned as a pulled model is.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from raggity.core.errors import ModelError

PREFIX = "ollama:"
MODEL_LAYER = "application/vnd.ollama.image.model"
DEFAULT_HOST = "registry.ollama.ai"
DEFAULT_NAMESPACE = "library"
DEFAULT_TAG = "latest"
GGUF_MAGIC = b"GGUF"
# Ollama's own name rules, roughly: letters, digits and . _ - (a tag also takes them); never `..`.
_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
_DIGEST = re.compile(r"sha256:([0-9a-f]{64})")
_MAX_MANIFEST_BYTES = 1 << 20


def ollama_home() -> Path:
    return Path(os.environ.get("OLLAMA_MODELS") or Path.home() / ".ollama" / "models").expanduser()


@dataclass(frozen=True)
class OllamaRef:
    """`qwen2.5:7b` is registry.ollama.ai/library/qwen2.5:7b."""

    host: str
    namespace: str
    model: str
    tag: str

    @property
    def name(self) -> str:
        """The short name Ollama shows: the default host and namespace left out."""
        prefix = "" if self.host == DEFAULT_HOST else f"{self.host}/"
        if prefix or self.namespace != DEFAULT_NAMESPACE:
            prefix += f"{self.namespace}/"
        return f"{prefix}{self.model}:{self.tag}"

    def manifest(self, home: Path) -> Path:
        return home / "manifests" / self.host / self.namespace / self.model / self.tag


@dataclass(frozen=True)
class OllamaModel:
    ref: OllamaRef
    blob: Path
    sha256: str  # the digest the manifest names the model layer by
    size: int  # as the manifest says


def is_ollama_name(name: str) -> bool:
    return name.startswith(PREFIX)


def parse_ref(name: str) -> OllamaRef:
    """`ollama:qwen2.5:7b`, `ollama:qwen2.5` (tag latest), `ollama:user/model:tag` or
    `ollama:host/namespace/model:tag`; ModelError for anything else."""
    spec = name.removeprefix(PREFIX)
    path, _, tag = spec.partition(":")
    parts = path.split("/")
    tag = tag or DEFAULT_TAG
    if len(parts) > 3 or not all(_PART.fullmatch(p) and ".." not in p for p in [*parts, tag]):
        raise ModelError(
            f"{name!r} is not an Ollama model name",
            'write it as Ollama does, e.g. [generation] model = "ollama:qwen2.5:7b"',
        )
    host = parts[0] if len(parts) == 3 else DEFAULT_HOST
    namespace = parts[-2] if len(parts) >= 2 else DEFAULT_NAMESPACE
    return OllamaRef(host, namespace, parts[-1], tag)


def find_model(name: str, home: Path | None = None) -> OllamaModel:
    """The model layer of `name` in the store, checked as the module says except for its hash
    (see `verify`); ModelError naming the file and the fix otherwise."""
    ref = parse_ref(name)
    home = home or ollama_home()
    manifest = ref.manifest(home)
    pull = f"pull it with `ollama pull {ref.name}`, or set OLLAMA_MODELS to the store that holds it"
    if not manifest.is_file():
        raise ModelError(f"{ref.name} is not in Ollama's store ({manifest} not found)", pull)
    _inside(manifest, home, ref.name)
    try:
        with manifest.open("rb") as handle:
            raw = handle.read(_MAX_MANIFEST_BYTES + 1)
        if len(raw) > _MAX_MANIFEST_BYTES:
            raise ValueError("larger than 1 MiB")
        layers = json.loads(raw)["layers"]
        found = [layer for layer in layers if layer.get("mediaType") == MODEL_LAYER]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelError(f"{manifest}: not an Ollama manifest ({type(exc).__name__})", pull) from exc
    if len(found) != 1:
        raise ModelError(f"{manifest}: {len(found)} model layers (expected one GGUF)", pull)
    match = _DIGEST.fullmatch(str(found[0].get("digest", "")))
    if match is None:
        raise ModelError(f"{manifest}: the model layer has no sha256 digest", pull)
    digest = match.group(1)
    blob = home / "blobs" / f"sha256-{digest}"
    if not blob.is_file():
        raise ModelError(f"{ref.name}: its GGUF {blob} is missing from Ollama's store", pull)
    _inside(blob, home / "blobs", ref.name)
    with blob.open("rb") as handle:
        if handle.read(len(GGUF_MAGIC)) != GGUF_MAGIC:
            raise ModelError(f"{blob}: not a GGUF file (the model layer of {ref.name})", pull)
    size = found[0].get("size")
    return OllamaModel(ref, blob, digest, size if isinstance(size, int) else blob.stat().st_size)


def verify(model: OllamaModel, actual_sha256: str) -> None:
    """The blob's name is its SHA-256: a file that hashes otherwise was changed or corrupted."""
    if actual_sha256 != model.sha256:
        raise ModelError(
            f"{model.blob}: SHA-256 mismatch (its name says {model.sha256[:12]}..., "
            f"the file hashes to {actual_sha256[:12]}...)",
            f"pull it again: `ollama rm {model.ref.name} && ollama pull {model.ref.name}`",
        )


def _inside(path: Path, folder: Path, name: str) -> None:
    """Refuses a file whose real location is outside `folder` (a symbolic link out of the store)."""
    if not path.resolve().is_relative_to(folder.resolve()):
        raise ModelError(
            f"{path}: resolves outside Ollama's store ({path.resolve()}), refused for {name}",
            "keep the store's manifests and blobs inside it",
        )


def list_models(home: Path | None = None) -> list[OllamaRef]:
    """Every manifest in the store, as names (nothing is opened or hashed)."""
    root = (home or ollama_home()) / "manifests"
    refs: list[OllamaRef] = []
    if not root.is_dir():
        return refs
    for manifest in sorted(root.glob("*/*/*/*")):
        host, namespace, model, tag = manifest.relative_to(root).parts
        if manifest.is_file() and all(_PART.fullmatch(p) for p in (host, namespace, model, tag)):
            refs.append(OllamaRef(host, namespace, model, tag))
    return refs
