"""The in-process engine: reads, chunks and embeds the files of an ingest in this process, and
appends their rows in batches through the index writer, whichever store it writes.

A changed file's unchanged text keeps its chunk id, and so its row and vector: it is not embedded
again. Its line range, ordinal or heading trail may have moved when text was edited above it; such
a row is rewritten with fresh metadata and its stored vector.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from raggity.core.faults import checkpoint
from raggity.core.protocols import Embedder, Tokenizer, Vectors
from raggity.core.types import Chunk
from raggity.ingest.chunker import ChunkingSettings
from raggity.pipeline.ingest.pace import kind_of
from raggity.pipeline.ingest.reading import batch_chunks, chunk_source, embed_chunks, read_settled
from raggity.pipeline.ingest.sources import SourceFile
from raggity.pipeline.ingest.sync import SyncRun
from raggity.store.index_seam import StoredChunk


@dataclass
class _Batch:
    chunks: list[Chunk] = field(default_factory=list)
    moved: list[tuple[Chunk, Vectors]] = field(default_factory=list)


class InProcessRows:
    """RowWriter in this process: batches of BATCH_CHUNKS chunks (RAGGITY_BATCH_CHUNKS in tests)."""

    def __init__(
        self,
        embedder: Embedder,
        tokenizer: Tokenizer,
        chunking: ChunkingSettings,
        *,
        batch: int | None = None,
    ) -> None:
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._chunking = chunking
        self._batch_chunks = batch or batch_chunks()

    def write(self, todo: Sequence[SourceFile], run: SyncRun) -> None:
        batch = _Batch()
        for item in todo:
            self._one(item, run, batch)
        self._flush(run, batch)

    def _one(self, item: SourceFile, run: SyncRun, batch: _Batch) -> None:
        # What this file sends to the embedder (its unchanged chunks keep their vectors): the work
        # the progress display counts, also for a file given up after sending some.
        queued = run.chunks_written + len(batch.chunks)
        old = run.manifest.sources.get(item.source)
        previous = run.writer.rows(list(old.chunk_ids)) if old is not None else {}

        def take(chunks: list[Chunk]) -> None:
            batch.chunks.extend(c for c in chunks if c.id not in run.stored)
            _note_moved(chunks, run.stored, previous, batch)
            checkpoint("read")
            if len(batch.chunks) >= self._batch_chunks:
                self._flush(run, batch)

        def drop(ids: list[str]) -> None:
            # An unsettled attempt's pending rows are dropped now, its written rows with the stale ones
            # at the end (rows that a later attempt shares are kept: they are listed by then).
            run.stale.update(ids)
            batch.chunks = [c for c in batch.chunks if c.source != item.source]
            batch.moved = [(c, v) for c, v in batch.moved if c.source != item.source]

        settled = read_settled(item, lambda: chunk_source(item, self._tokenizer, self._chunking, take), drop)
        if settled.digest is None:
            reason = settled.problem or ""
            run.skip(item, reason)
            run.progress.warn(item.source, reason)
        else:
            run.finish(item, settled.ids, settled.digest)
        run.progress.read(kind_of(item.source), item.size, run.chunks_written + len(batch.chunks) - queued)
        run.progress.advanced(1, 0, 0)

    def _flush(self, run: SyncRun, batch: _Batch) -> None:
        if batch.chunks:
            started = time.perf_counter()
            checkpoint("embed:before")
            vectors = embed_chunks(self._embedder, batch.chunks, run.progress)
            checkpoint("embed:after")
            run.embed_seconds += time.perf_counter() - started
            run.writer.append(batch.chunks, vectors)
            run.tokens_embedded += sum(c.n_tokens for c in batch.chunks)
            run.chunks_written += len(batch.chunks)
            run.stored.update(c.id for c in batch.chunks)
            batch.chunks = []
        if batch.moved:
            # Nothing is re-embedded. A kill between delete and append leaves listed-but-missing rows,
            # which the next run repairs.
            run.writer.delete([chunk.id for chunk, _ in batch.moved])
            run.writer.append([chunk for chunk, _ in batch.moved], np.stack([v for _, v in batch.moved]))
            batch.moved = []
        run.record()


def _note_moved(
    chunks: list[Chunk], stored: set[str], previous: dict[str, StoredChunk], batch: _Batch
) -> None:
    for chunk in chunks:
        row = previous.get(chunk.id)
        if chunk.id in stored and row is not None and row.chunk != chunk:
            batch.moved.append((chunk, row.vector))
