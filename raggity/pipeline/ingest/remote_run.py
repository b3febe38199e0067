"""One `rag ingest` into an index on object storage: discovery and the diff on this machine (the
driver), reading, chunking and embedding in-process or on Ray, one commit (remote_sync.py)."""

from __future__ import annotations

import os
from collections.abc import Callable

from raggity.config.location import IndexLocation
from raggity.config.schema import Config
from raggity.core.errors import RaggityError, os_reason
from raggity.ingest.chunker import ChunkingSettings
from raggity.ingest.discover import discover
from raggity.pipeline.ingest.remote_sync import InProcessRows, RemoteIndexSync, RowWriter
from raggity.pipeline.ingest.run import IngestRequest, finished
from raggity.pipeline.ingest.sources import file_source, in_roots
from raggity.pipeline.ingest.sync import BATCH_CHUNKS, IngestProgress, IngestReport, Skipped, SourceFile
from raggity.pipeline.models import Models


def remote_ingest(
    request: IngestRequest,
    location: IndexLocation,
    *,
    config: Config,
    models: Models,
    chunking: ChunkingSettings,
    engine: str,
    progress: IngestProgress | None,
    warn: Callable[[str], None],
) -> IngestReport:
    gone = [root for root in request.roots if not root.exists()]
    if gone:
        raise RaggityError(f"{gone[0]}: no such file or folder", "check the path")
    found = discover(list(request.roots), config.ingest, index_dir=config.index_dir)
    sources: list[SourceFile] = []
    early = [Skipped(s.path, s.reason) for s in found.skipped]
    for path in found.files:
        try:
            sources.append(
                file_source(path, max_chars=config.ingest.max_file_chars, real=found.real_paths.get(path))
            )
        except OSError as exc:
            early.append(Skipped(str(path), f"unreadable: {os_reason(exc)}"))
    if progress is not None:
        for skipped in early:
            progress.warn(skipped.source, skipped.reason)
    embedder = models.embedder
    sync = RemoteIndexSync(
        location,
        embedder_identity=embedder.identity,
        dim=embedder.dim,
        chunking=chunking,
        rows=_rows(engine, request, config, models, chunking),
        progress=progress,
        wait_seconds=request.wait_seconds,
    )
    report = sync.run(sources, in_roots(list(request.roots)), rebuild=request.rebuild)
    if report.rebuilt:
        # The local engine carries other folders' files over a rebuild; here a rebuild holds exactly
        # the folders given.
        warn("a rebuild of an index on object storage holds only the folders given to this ingest")
    if config.retrieval.graph:
        warn("the entity graph is not built for an index on object storage yet")
    return finished(report, early, found.excluded, strict=request.strict)


def _rows(
    engine: str, request: IngestRequest, config: Config, models: Models, chunking: ChunkingSettings
) -> RowWriter:
    if engine == "ray":
        from raggity.pipeline.ingest.ray_rows import RayRows  # noqa: PLC0415 - Ray loads only for its engine

        return RayRows(
            config,
            chunking,
            address=request.ray_address or config.ingest.ray_address or None,
            dim=models.embedder.dim,
        )
    # Tests force many small batches (and so many kill points) with RAGGITY_BATCH_CHUNKS.
    batch = max(int(os.environ.get("RAGGITY_BATCH_CHUNKS") or BATCH_CHUNKS), 1)
    return InProcessRows(models.embedder, models.tokenizer, chunking, batch_chunks=batch)
