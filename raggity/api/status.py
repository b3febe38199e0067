"""What is indexed and which models resolve where: the data behind `rag status` and `rag models`."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from raggity.config.schema import Config
from raggity.core.errors import ModelError
from raggity.inference.devices import Placement, embedder_placement, generator_placement
from raggity.models.hashing import cache_home
from raggity.models.packaged import GENERATORS
from raggity.models.registry import (
    describe_reranker_fix,
    hash_cache,
    resolve_embedder,
    resolve_generator,
    resolve_reranker,
)
from raggity.store.health import require_healthy
from raggity.store.layout import IndexLayout
from raggity.store.manifest import Manifest
from raggity.store.ocr_pages import ocr_page_count
from raggity.store.rebuild_state import rebuild_notice


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
    # The folder, or the s3:// (gs://, az://) URI of an index on object storage.
    index_dir: Path | str
    config_file: Path | None
    exists: bool
    files: int
    chunks: int
    disk_bytes: int
    last_ingest: float | None
    embedder: str
    notice: str = ""
    # The Lance table version CURRENT names, for an index on object storage (disk_bytes is then -1:
    # its size is not measured).
    version: int | None = None
    # Pages (an image counts one) whose text came from OCR; counted for an index folder only.
    ocr_pages: int = 0


def folder_size(folder: Path, *, stat: Callable[[Path], os.stat_result] = os.lstat) -> int:
    """Bytes in `folder`, counting what exists when looked at: an ingest may delete files meanwhile."""
    total = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            try:
                total += stat(Path(parent) / name).st_size
            except FileNotFoundError:
                continue
    return total


def index_size(layout: IndexLayout) -> int:
    """Bytes of raggity's own files in the index folder, never of anything else that lives there."""
    total = 0
    for entry in layout.own_entries():
        try:
            total += entry.lstat().st_size if not entry.is_dir() else folder_size(entry)
        except FileNotFoundError:
            continue
    return total


def index_status(config: Config) -> IndexStatus:
    if config.index_location.on_object_store:
        return remote_index_status(config)
    layout = IndexLayout(config.index_dir)
    layout.refuse_a_file()
    # A link or a FIFO among its entries first: a FIFO manifest is no file (`exists` says no), and
    # reading it for the size or a notice would block for ever.
    layout.check_entries()
    # No index yet is a status, not an error; a damaged one is the error every command gives.
    manifest = require_healthy(layout) if layout.exists() else Manifest()
    return IndexStatus(
        index_dir=layout.root,
        config_file=config.source,
        exists=layout.exists(),
        files=len(manifest.sources),
        chunks=sum(len(e.chunk_ids) for e in manifest.sources.values()),
        disk_bytes=index_size(layout),
        last_ingest=manifest.last_ingest,
        embedder=manifest.fingerprint.embedder if manifest.fingerprint else "",
        notice=rebuild_notice(layout),
        ocr_pages=ocr_page_count(layout.table, manifest) if layout.exists() else 0,
    )


def remote_index_status(config: Config) -> IndexStatus:
    """What CURRENT and its manifest say about an index on object storage: CURRENT is checked as every
    reading command checks it (a damaged pointer, or a version the table does not have, is the same
    one-line error), which opens the table at that version (a few small GETs)."""
    from raggity.store.object_commit import current_commit, open_committed  # noqa: PLC0415 - as above
    from raggity.store.object_store import S3Objects  # noqa: PLC0415 - a local index never loads boto3
    from raggity.store.object_store_errors import lance_store_error  # noqa: PLC0415 - as above

    location = config.index_location
    objects = S3Objects(location)
    commit = current_commit(objects)
    manifest = Manifest()
    if commit is not None:
        try:
            index = open_committed(
                objects,
                location.child("lancedb", "chunks.lance"),
                dict(location.storage_options),
                where=f"{location.uri} manifest",
            )
        except (ValueError, OSError, RuntimeError) as exc:
            raise lance_store_error(exc, location) or exc from None
        commit = index.commit
        manifest = index.manifest
    return IndexStatus(
        index_dir=location.uri,
        config_file=config.source,
        exists=commit is not None,
        files=len(manifest.sources),
        chunks=sum(len(e.chunk_ids) for e in manifest.sources.values()),
        disk_bytes=-1,
        last_ingest=manifest.last_ingest,
        embedder=manifest.fingerprint.embedder if manifest.fingerprint else "",
        version=None if commit is None else commit.version,
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
        from raggity.inference.cross_encoder import find_cross_encoder_files  # noqa: PLC0415 - loaded only by the command that needs it

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


def device_placements(config: Config) -> list[Placement]:
    """Where the generator and the embedder run with this config, and why. Loads the runtimes'
    bindings (not the models) to ask what the builds can do."""
    from raggity.inference.llama_runtime import supports_gpu_offload  # noqa: PLC0415 - loads llama.cpp's bindings
    from raggity.inference.onnx_session import available_providers  # noqa: PLC0415 - loads onnxruntime

    gen, emb = config.generation, config.embedding
    try:
        generator = generator_placement(gen.gpu_layers, gen.threads, supports_gpu_offload())
    except ModelError as exc:
        generator = Placement("generator", "none", f"{exc.message}; fix: {exc.hint}", ok=False)
    return [generator, embedder_placement(emb.providers, emb.threads, available_providers())]
