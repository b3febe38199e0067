"""What is indexed and which models resolve where: the data behind `rag status` and `rag models`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from raggity.config.schema import Config
from raggity.core.errors import ModelError
from raggity.models.hashing import cache_home
from raggity.models.packaged import GENERATORS
from raggity.models.registry import (
    describe_reranker_fix,
    hash_cache,
    resolve_embedder,
    resolve_generator,
    resolve_reranker,
)
from raggity.store.layout import IndexLayout
from raggity.store.manifest import load_manifest


@dataclass(frozen=True)
class ModelStatus:
    role: str
    name: str
    path: str
    size: int
    sha256: str
    present: bool
    note: str = ""


@dataclass(frozen=True)
class IndexStatus:
    index_dir: Path
    config_file: Path | None
    exists: bool
    files: int
    chunks: int
    disk_bytes: int
    last_ingest: float | None
    embedder: str


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def index_status(config: Config) -> IndexStatus:
    layout = IndexLayout(config.index_dir)
    manifest = load_manifest(layout.manifest)
    return IndexStatus(
        index_dir=layout.root,
        config_file=config.source,
        exists=layout.exists(),
        files=len(manifest.sources),
        chunks=sum(len(e.chunk_ids) for e in manifest.sources.values()),
        disk_bytes=folder_size(layout.root),
        last_ingest=manifest.last_ingest,
        embedder=manifest.fingerprint.embedder if manifest.fingerprint else "",
    )


def _file_status(role: str, name: str, path: Path) -> ModelStatus:
    return ModelStatus(role, name, str(path), path.stat().st_size, hash_cache().digest(path), True)


def model_statuses(config: Config) -> list[ModelStatus]:
    base = config.base_dir
    rows: list[ModelStatus] = []
    try:
        emb = resolve_embedder(config.embedding, base)
        rows.append(_file_status("embedder", config.embedding.model_path or config.embedding.model, emb.onnx))
        rows.append(_file_status("embedder tokenizer", config.embedding.model, emb.tokenizer))
    except ModelError as exc:
        rows.append(ModelStatus("embedder", config.embedding.model, "", 0, "", False, str(exc)))
    folder = resolve_reranker(config.retrieval, base)
    if not config.retrieval.rerank:
        rows.append(
            ModelStatus("reranker", config.retrieval.rerank_model, "", 0, "", True, "off (rerank = false)")
        )
    elif folder is None:
        rows.append(
            ModelStatus(
                "reranker",
                config.retrieval.rerank_model,
                "",
                0,
                "",
                False,
                describe_reranker_fix(config.retrieval),
            )
        )
    else:
        from raggity.inference.cross_encoder import find_cross_encoder_files

        onnx, _ = find_cross_encoder_files(folder)
        rows.append(_file_status("reranker", config.retrieval.rerank_model, onnx))
    gen = config.generation
    packaged = GENERATORS.get(gen.model)
    assembled = cache_home() / "models" / f"{gen.model}.gguf"
    if not gen.model_path and packaged is not None and len(packaged.parts) > 1 and not assembled.is_file():
        missing = [p.pip_name for p in packaged.parts if p.locate() is None]
        note = (
            f"missing packages: {' '.join(missing)}" if missing else "parts installed; assembled on first use"
        )
        rows.append(ModelStatus("generator", gen.model, "", 0, packaged.sha256, not missing, note))
        return rows
    try:
        found = resolve_generator(gen, base)
        rows.append(_file_status("generator", gen.model_path or gen.model, found.gguf))
    except ModelError as exc:
        rows.append(ModelStatus("generator", gen.model, "", 0, "", False, str(exc)))
    return rows
