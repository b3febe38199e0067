"""The in-process engine: reads, chunks and embeds the files of an ingest in this process, and
appends their rows in batches through the index writer, whichever store it writes. A changed file's
unchanged chunks keep their rows and vectors (SyncRun.keep)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from raggity.core.faults import checkpoint
from raggity.core.protocols import Embedder, Tokenizer
from raggity.core.types import Chunk
from raggity.documents.chunker import ChunkingSettings
from raggity.pipeline.ingest.reading import batch_chunks, chunk_source, embed_chunks, read_settled
from raggity.pipeline.ingest.sources import SourceFile
from raggity.pipeline.ingest.sync import SyncRun


@dataclass
class _Batch:
    chunks: list[Chunk] = field(default_factory=list)  # to embed
    kept: list[Chunk] = field(default_factory=list)  # already stored


class InProcessRows:
    """RowWriter in this process: batches of BATCH_CHUNKS chunks (RAGGITY_BATCH_CHUNKS in tests)."""

    def __init__(self, embedder: Embedder, tokenizer: Tokenizer, chunking: ChunkingSettings) -> None:
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._chunking = chunking
        self._batch_chunks = batch_chunks()

    def write(self, todo: Sequence[SourceFile], run: SyncRun) -> None:
        batch = _Batch()
        for item in todo:
            self._one(item, run, batch)
        self._flush(run, batch)

    def _one(self, item: SourceFile, run: SyncRun, batch: _Batch) -> None:
        # What this file sends to the embedder: the work the progress display counts, also for a file
        # given up after sending some.
        queued = run.chunks_written + len(batch.chunks)

        def take(chunks: list[Chunk]) -> None:
            batch.chunks.extend(c for c in chunks if c.id not in run.stored)
            batch.kept.extend(c for c in chunks if c.id in run.stored)
            checkpoint("read")
            if len(batch.chunks) >= self._batch_chunks:
                self._flush(run, batch)

        def drop(ids: list[str]) -> None:
            # An unsettled attempt's pending rows are dropped now, its written rows with the stale ones
            # at the end (rows that a later attempt shares are kept: they are listed by then).
            run.stale.update(ids)
            batch.chunks = [c for c in batch.chunks if c.source != item.source]
            batch.kept = [c for c in batch.kept if c.source != item.source]

        settled = read_settled(item, lambda: chunk_source(item, self._tokenizer, self._chunking, take), drop)
        new = run.chunks_written + len(batch.chunks) - queued
        if settled.digest is None:
            run.skip(item, settled.problem or "", new=new)
        else:
            run.finish(item, settled.ids, settled.digest, new=new)

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
        run.keep(batch.kept)
        batch.kept = []
        run.record()
