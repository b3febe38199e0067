"""`rag ingest --engine ray`: the files the driver's plan chose go through the Ray Data stages
(ray_engine.py) into an index on object storage; the driver shows progress from the Tally actor,
keeps the lease alive, and reports each file to the run (sync.py), as the in-process engine does."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from raggity.config.schema import Config
from raggity.core.abandoned_thread import leave_at_exit_while_running
from raggity.core.errors import RaggityError
from raggity.core.types import Chunk
from raggity.documents.chunker import ChunkingSettings
from raggity.models.registry import resolve_embedder
from raggity.pipeline.ingest.ray_engine import (
    ChunkerSpec,
    EmbedderSpec,
    RayIngestPlan,
    new_tally,
    tally_report,
    write_chunks,
)
from raggity.pipeline.ingest.ray_local import connect
from raggity.pipeline.ingest.sources import SourceFile
from raggity.pipeline.ingest.sync import SyncRun
from raggity.store.index_seam import WritesRowsElsewhere
from raggity.store.uri import redact

# How often the driver reads the Tally for the progress bar, and renews the lease (well inside it).
POLL_SECONDS = 0.5
RENEW_SECONDS = 60.0


def cluster_plan(
    paths: Sequence[tuple[str, str, tuple[str, ...]]],
    config: Config,
    chunking: ChunkingSettings,
    *,
    cpus: float,
    dim: int,
) -> RayIngestPlan:
    """The stages sized to the cluster: one chunking actor and the writers share one CPU, and every
    other CPU holds an embedding actor (one ONNX thread each, one model load per actor)."""
    files = resolve_embedder(config.embedding, config.base_dir)
    return RayIngestPlan(
        paths=tuple(paths),
        chunker=ChunkerSpec(str(files.tokenizer), chunking, config.ingest),
        # One ONNX thread per embedding actor; the providers onnxruntime finds on the worker's node.
        embedder=EmbedderSpec(files, replace(config.embedding, threads=1, providers=[])),
        dim=dim,
        chunk_workers=1,
        embed_workers=max(1, int(cpus) - 1),
        chunk_cpus=0.5,
        embed_cpus=1.0 if cpus >= 3 else 0.5,
        write_cpus=0.25,
    )


class RayRows:
    """RowWriter on a Ray cluster. `failure`: the store's mapping of its own errors to one line."""

    def __init__(
        self,
        config: Config,
        chunking: ChunkingSettings,
        *,
        address: str | None,
        dim: int,
        failure: Callable[[BaseException], RaggityError | None],
    ) -> None:
        self._config = config
        self._chunking = chunking
        self._address = address
        self._dim = dim
        self._failure = failure

    def write(self, todo: Sequence[SourceFile], run: SyncRun) -> None:
        """The chunks of `todo` that the index does not hold are embedded on the cluster and written
        in one Lance commit; nothing is visible before the ingest's commit."""
        writer = run.writer
        if not isinstance(writer, WritesRowsElsewhere):  # Indexer._rows refuses a local index first
            raise TypeError(f"the Ray engine cannot write through {type(writer).__name__}")
        by_source = {item.source: item for item in todo}
        paths = [(item.source, item.opened or item.source, _stored(item, run)) for item in todo]
        ray = connect(self._address)
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        plan = cluster_plan(paths, self._config, self._chunking, cpus=cpus, dim=self._dim)
        target = writer.lance_target()
        tally = new_tally()
        failure: list[BaseException] = []

        def work() -> None:
            try:
                write_chunks(plan, tally, target.uri, target.storage_options, mode=target.mode)
            except BaseException as exc:  # re-raised on the driver's thread below
                failure.append(exc)

        started = time.perf_counter()
        worker = threading.Thread(target=work, name="raggity-ray-write", daemon=True)
        worker.start()
        kept: list[Chunk] = []
        renewed = time.monotonic()
        try:
            while worker.is_alive():
                worker.join(POLL_SECONDS)
                _poll(tally, by_source, run, kept)
                if time.monotonic() - renewed > RENEW_SECONDS:
                    writer.save(run.manifest)  # on object storage: renews the lease
                    renewed = time.monotonic()
        except KeyboardInterrupt:
            # The executor cannot be stopped from here: the process leaves before Ray's exit handler
            # shuts Ray down under it (Ray's processes die with the driver that started them).
            leave_at_exit_while_running(worker)
            raise
        if failure:
            if isinstance(failure[0], KeyboardInterrupt | RaggityError):
                raise failure[0]
            raise ray_failure(failure[0], self._failure) from failure[0]
        _poll(tally, by_source, run, kept)
        run.keep(kept)
        run.embed_seconds += time.perf_counter() - started


def _stored(item: SourceFile, run: SyncRun) -> tuple[str, ...]:
    entry = run.manifest.sources.get(item.source)
    return () if entry is None else tuple(i for i in entry.chunk_ids if i in run.stored)


def ray_failure(exc: BaseException, failure: Callable[[BaseException], RaggityError | None]) -> RaggityError:
    """One line for a failed Ray ingest: a store failure as the in-process engine reports it (by the
    store's own mapping, `failure`), anything else by its first line (Ray's errors carry the workers'
    tracebacks; --debug shows them)."""
    text = str(exc)
    mapped = failure(RuntimeError(text))
    if mapped is not None:
        return mapped
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    return RaggityError(
        f"the Ray ingest failed: {redact(first)[:200]}",
        "nothing was published; rerun with --debug for the workers' tracebacks",
    )


def _poll(tally: Any, by_source: Mapping[str, SourceFile], run: SyncRun, kept: list[Chunk]) -> None:
    """Reports the news of the Tally to the run (which tells the progress display): each file read or
    skipped, and the chunks embedded; the kept chunks wait in `kept` for the rows to be written."""
    sources, skipped, chunks, tokens = tally_report(tally)
    for result in sources:
        new = len(result.chunk_ids) - len(result.kept)
        run.finish(by_source[result.source], result.chunk_ids, result.sha256, new=new)
        kept.extend(result.kept)
    for source, reason in skipped:
        run.skip(by_source[source], reason)
    if chunks:
        run.progress.advanced(0, chunks, tokens)
        run.chunks_written += chunks
        run.tokens_embedded += tokens
