"""Reading one source into chunks, the same way for every engine and every store: read, chunk, and
hash the content before and after, so that what the index records describes the bytes it chunked.

A source that changes while it is read is read again, up to READ_ATTEMPTS times, then left for the
next ingest; the reasons a source is skipped are worded here, once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from raggity.config.schema import IngestConfig
from raggity.core.errors import RaggityError
from raggity.core.protocols import Embedder, Tokenizer, Vectors
from raggity.core.types import Chunk, Document
from raggity.documents.chunker import ChunkIdAllocator, ChunkingSettings, chunk_document
from raggity.documents.readers.ocr_options import ocr_options
from raggity.documents.readers.source import os_error_reason
from raggity.pipeline.ingest.report import IngestProgress, Skipped
from raggity.pipeline.ingest.sources import SourceFile, file_source

# Chunks embedded and written per batch: large enough for length-sorted batching to cut padding,
# small enough that memory stays bounded on a huge file.
BATCH_CHUNKS = 512
# Chunks per embedding call within a batch. A batch can pass a thousand chunks (it closes at the end
# of a document), half a minute of embedding with the bar standing still; the bar moves after each
# slice instead. Sliced in length order, slices pad no more than one call does (measured: the same
# rate and the same vectors as the whole batch at once; unsorted slices of 128 were 7-14% slower).
EMBED_SLICE = 128
# How often a source that changes while being read is read again before it is left for the next run.
READ_ATTEMPTS = 3

VANISHED = "vanished during ingest"
NO_TEXT = "no text"
CHANGED_WHILE_READ = f"changed while being read ({READ_ATTEMPTS} tries); the next ingest indexes it"


def batch_chunks() -> int:
    """Chunks per batch; tests force many small batches (and so many kill points) with
    RAGGITY_BATCH_CHUNKS."""
    return max(int(os.environ.get("RAGGITY_BATCH_CHUNKS") or BATCH_CHUNKS), 1)


def open_source(path: Path, *, name: str, real: str | None, settings: IngestConfig) -> SourceFile | Skipped:
    """A discovered file as a source named `name` (stat only), read with the [ingest] `settings`, or
    why it cannot be one. Every engine opens files here, in the driver or in a worker, so a failure
    reads the same wherever it happens."""
    ocr = ocr_options(settings)
    try:
        return file_source(path, max_chars=settings.max_file_chars, real=real, ocr=ocr, name=name)
    except OSError as exc:
        return Skipped(name, os_error_reason(exc))


@dataclass(frozen=True)
class Settled:
    """A source read from content that held still: its chunk ids and that content's digest; or
    (digest None) why it was skipped, with the ids its last attempt made."""

    ids: list[str]
    digest: str | None
    problem: str | None


def chunk_source(
    item: SourceFile, tokenizer: Tokenizer, chunking: ChunkingSettings, take: Callable[[list[Chunk]], None]
) -> tuple[list[str], str | None]:
    """Reads and chunks `item`, handing each document's chunks to `take` as they come (a huge file is
    never held whole); returns the chunk ids and None, or the ids so far and why reading failed.
    Only reading and chunking fail the file: a failed write in `take` fails the run."""
    ids: list[str] = []
    allocator = ChunkIdAllocator(item.source)
    documents = _documents(item)
    while True:
        try:
            document = next(documents, None)
            if document is None:
                break
            chunks = chunk_document(document, tokenizer, chunking, start_ordinal=len(ids), ids=allocator)
        except RaggityError as exc:
            return ids, str(exc) or exc.__class__.__name__
        except OSError as exc:
            return ids, os_error_reason(exc)
        ids.extend(c.id for c in chunks)
        take(chunks)
    if not ids:
        return ids, NO_TEXT
    return ids, None


def read_settled(
    item: SourceFile,
    read: Callable[[], tuple[list[str], str | None]],
    drop: Callable[[list[str]], None],
) -> Settled:
    """Runs `read` (chunk_source, bound to its sink) until the content's digest is the same before
    and after it; `drop` is handed each unsettled attempt's ids, whose rows must not be kept."""
    ids: list[str] = []
    for _ in range(READ_ATTEMPTS):
        before = safe_digest(item)
        ids, problem = read()
        after = None if problem is not None else safe_digest(item)
        if after is not None and after == before:
            return Settled(ids, after, None)
        drop(ids)
        if after is None:
            return Settled(ids, None, problem or VANISHED)
    return Settled(ids, None, CHANGED_WHILE_READ)


def read_chunks(
    item: SourceFile, tokenizer: Tokenizer, chunking: ChunkingSettings
) -> tuple[list[Chunk], Settled]:
    """`item`'s chunks from settled content, held whole (the Ray stages' unit of work)."""
    chunks: list[Chunk] = []
    settled = read_settled(
        item, lambda: chunk_source(item, tokenizer, chunking, chunks.extend), lambda _: chunks.clear()
    )
    return (chunks if settled.digest is not None else []), settled


def safe_digest(item: SourceFile) -> str | None:
    try:
        return item.digest()
    except OSError:
        return None


def embed_chunks(embedder: Embedder, chunks: Sequence[Chunk], progress: IngestProgress) -> Vectors:
    """The chunks' vectors, in their order, embedded in slices of similar length, each reported to
    `progress` as it is done."""
    order = sorted(range(len(chunks)), key=lambda i: len(chunks[i].search_text))
    vectors: Vectors | None = None
    for start in range(0, len(order), EMBED_SLICE):
        part = order[start : start + EMBED_SLICE]
        done = np.asarray(embedder.embed([chunks[i].search_text for i in part]), dtype=np.float32)
        if vectors is None:
            vectors = np.empty((len(chunks), done.shape[1]), dtype=np.float32)
        vectors[part] = done
        progress.advanced(0, len(part), sum(chunks[i].n_tokens for i in part))
    assert vectors is not None  # called with chunks only
    return vectors


def _documents(item: SourceFile) -> Iterator[Document]:
    """The source's documents, with a failure to start reading raised at the first next()."""
    yield from item.read()
