"""Brings the index in step with a set of sources: add, replace and remove their chunks.

Write order, so that a kill at any point leaves an index that answers and that the next run repairs:
  1. new chunk rows go to LanceDB and Tantivy (invisible: the manifest does not list them yet);
  2. the manifest is replaced atomically: this is the commit point;
  3. rows no longer listed are deleted from both stores.
Every run starts by deleting rows the manifest does not list (left by a killed run) and
re-indexing sources whose listed rows are missing, so the final index equals a clean ingest.

A source is hashed before and after it is read; the entry recorded for it (hash, and the size and
mtime seen before the read) describes the bytes that were chunked, or the source is read again.
After changes, the stores are compacted so that scores and size match a clean ingest (see _compact).
"""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Protocol

import numpy as np

from raggity.core.errors import RaggityError, storage_error
from raggity.core.faults import checkpoint, fail_point
from raggity.core.protocols import Embedder, Tokenizer, Vectors
from raggity.core.types import Chunk, Document
from raggity.ingest.chunker import ChunkIdAllocator, ChunkingSettings, chunk_document
from raggity.pipeline.ingest.pace import kind_of
from raggity.store.bm25_index import Bm25Writer
from raggity.store.layout import IndexLayout
from raggity.store.manifest import Fingerprint, Manifest, SourceEntry, load_manifest
from raggity.store.ownership import claim_index_folder
from raggity.store.vector_table import StoredChunk, VectorTableWriter

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
# Old LanceDB versions stay this long after they were replaced: long enough for a search that opened
# one to finish reading it, short enough that the index's size follows its content.
VERSION_GRACE = timedelta(seconds=10)


def index_fingerprint(embedder_identity: str, chunking: ChunkingSettings) -> Fingerprint:
    """What an index's vectors and chunks depend on: a change to any of it forces a rebuild."""
    return Fingerprint(
        embedder_identity, chunking.chunk_tokens, chunking.parent_tokens, chunking.bm25_tokenizer
    )


@dataclass(frozen=True)
class SourceFile:
    """One thing to index: a file, or a record of an evaluation corpus.

    size and mtime_ns are a stamp taken before reading (mtime_ns 0: unknown, compare by digest);
    digest() hashes the current content, and is called before and after read() to detect a change.
    """

    source: str
    size: int
    mtime_ns: int
    digest: Callable[[], str]
    read: Callable[[], Iterator[Document]]


class IngestProgress(Protocol):
    def planned(self, files: int, sizes: Mapping[str, int]) -> None:
        """`files` to read, and their bytes by kind (see pace.kind_of; unchanged files are not counted)."""
        ...

    def advanced(self, files: int, chunks: int, tokens: int) -> None:
        """`chunks` embedded (with `tokens`), and `files` finished, since the last call."""
        ...

    def read(self, kind: str, size: int, chunks: int) -> None:
        """A file of `kind` and `size` bytes was read; `chunks` of its chunks are new and will be embedded."""
        ...

    def warn(self, source: str, reason: str) -> None: ...


class SilentProgress:
    def planned(self, files: int, sizes: Mapping[str, int]) -> None:
        pass

    def read(self, kind: str, size: int, chunks: int) -> None:
        pass

    def advanced(self, files: int, chunks: int, tokens: int) -> None:
        pass

    def warn(self, source: str, reason: str) -> None:
        pass


@dataclass(frozen=True)
class Skipped:
    source: str
    reason: str


@dataclass(frozen=True)
class IngestReport:
    added: int
    changed: int
    removed: int
    unchanged: int
    skipped: tuple[Skipped, ...]
    chunks_written: int
    tokens_embedded: int
    seconds: float
    embed_seconds: float
    rebuilt: bool
    repaired: int
    # Left out by a default rule (hidden, credentials, generated): reported, but not a failure.
    excluded: tuple[Skipped, ...] = ()


@dataclass
class _Batch:
    chunks: list[Chunk] = field(default_factory=list)
    moved: list[tuple[Chunk, Vectors]] = field(default_factory=list)
    finished: dict[str, SourceEntry] = field(default_factory=dict)


@dataclass
class _Write:
    """One run's open stores and what it has learnt so far: every step of the run reads and updates
    these together, so they travel as one value rather than six arguments."""

    table: VectorTableWriter
    bm25: Bm25Writer
    manifest: Manifest
    # Chunk ids the table holds (a chunk already there is not embedded again).
    stored: set[str] = field(default_factory=set)
    # Rows to delete at the end: of removed files, of changed files' old chunks, of failed reads.
    stale: set[str] = field(default_factory=set)
    batch: _Batch = field(default_factory=_Batch)


class IndexSync:
    def __init__(
        self,
        layout: IndexLayout,
        *,
        embedder: Embedder,
        tokenizer: Tokenizer,
        chunking: ChunkingSettings,
        progress: IngestProgress | None = None,
        version_grace: timedelta = VERSION_GRACE,
    ) -> None:
        self._layout = layout
        self._version_grace = version_grace
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._chunking = chunking
        self._progress = progress or SilentProgress()
        self._fingerprint = index_fingerprint(embedder.identity, chunking)
        self._embed_seconds = 0.0
        self._tokens = 0
        self._written = 0
        # Tests force many small batches (and so many kill points) with RAGGITY_BATCH_CHUNKS.
        self._batch_chunks = max(int(os.environ.get("RAGGITY_BATCH_CHUNKS") or BATCH_CHUNKS), 1)

    def run(
        self, sources: Sequence[SourceFile], in_scope: Callable[[str], bool], *, rebuild: bool = False
    ) -> IngestReport:
        claim_index_folder(self._layout)
        try:
            return self._run(sources, in_scope, rebuild=rebuild)
        except (OSError, RuntimeError, ValueError) as exc:
            # LanceDB and Tantivy report a full disk or read-only media as ValueError/RuntimeError.
            mapped = storage_error(exc, self._layout.root)
            if mapped is None:
                raise
            raise mapped from exc

    def _run(
        self, sources: Sequence[SourceFile], in_scope: Callable[[str], bool], *, rebuild: bool
    ) -> IngestReport:
        started = time.perf_counter()
        # A run killed inside atomic_write_bytes leaves its temporary sibling; the caller holds the lock.
        for name in (self._layout.manifest.name, self._layout.marker.name):
            for leftover in self._layout.root.glob(f".{name}.*.tmp"):
                leftover.unlink(missing_ok=True)
        # --rebuild must not read the old manifest: it is the documented fix for a damaged one.
        manifest = Manifest() if rebuild else load_manifest(self._layout.manifest)
        rebuilt = rebuild or (manifest.fingerprint is not None and manifest.fingerprint != self._fingerprint)
        if rebuilt or manifest.fingerprint is None:
            manifest = self._reset(rebuilding=rebuilt or manifest.rebuilding)
        w = _Write(
            VectorTableWriter(self._layout.lancedb, self._embedder.dim),
            Bm25Writer(self._layout.tantivy, self._chunking.bm25_tokenizer),
            manifest,
        )
        repaired = self._repair(w)

        current = {s.source for s in sources}
        removed = [s for s in manifest.sources if in_scope(s) and s not in current]
        for source in removed:
            w.stale.update(manifest.sources.pop(source).chunk_ids)
        if removed:
            manifest.save(self._layout.manifest)
            checkpoint("delete:manifest")

        todo, unchanged = self._plan(sources, manifest)
        sizes: Counter[str] = Counter()
        for item in todo:
            sizes[kind_of(item.source)] += item.size
        self._progress.planned(len(todo), sizes)
        skipped: list[Skipped] = []
        w.stored = w.table.ids()
        added = changed = 0
        for item in todo:
            ids, digest, problem, new_chunks = self._read_settled(item, w)
            if digest is None:
                reason = problem or "vanished during ingest"
                skipped.append(Skipped(item.source, reason))
                self._progress.warn(item.source, reason)
                old = manifest.sources.pop(item.source, None)
                if old is not None:
                    w.stale.update(old.chunk_ids)
                # What it sent was embedded all the same.
                self._progress.read(kind_of(item.source), item.size, new_chunks)
                self._progress.advanced(1, 0, 0)
                continue
            old = manifest.sources.get(item.source)
            if old is not None:
                w.stale.update(set(old.chunk_ids) - set(ids))
                changed += 1
            else:
                added += 1
            w.batch.finished[item.source] = SourceEntry(digest, item.size, item.mtime_ns, tuple(ids))
            self._progress.read(kind_of(item.source), item.size, new_chunks)
            self._progress.advanced(1, 0, 0)
        self._flush(w)
        w.stale -= manifest.live_ids()
        self._delete_stale(w)
        self._compact(w, changed=bool(self._written or w.stale))
        manifest.rebuilding = False
        manifest.save(self._layout.manifest)
        w.table.cleanup(self._version_grace)
        return IngestReport(
            added=added,
            changed=changed,
            removed=len(removed),
            unchanged=unchanged,
            skipped=tuple(skipped),
            chunks_written=self._written,
            tokens_embedded=self._tokens,
            seconds=time.perf_counter() - started,
            embed_seconds=self._embed_seconds,
            rebuilt=rebuilt,
            repaired=repaired,
        )

    def _read_settled(self, item: SourceFile, w: _Write) -> tuple[list[str], str | None, str | None, int]:
        """Chunks `item` from content that did not change while it was read: (chunk ids, digest of that
        content, None, n), or (ids, None, reason, n) when it cannot be read or never holds still. `n`
        counts the chunks it sent to the embedder (unchanged chunks keep their vectors): the work the
        progress display counts."""
        queued = self._written + len(w.batch.chunks)

        def sent() -> int:
            return self._written + len(w.batch.chunks) - queued

        ids: list[str] = []
        for _ in range(READ_ATTEMPTS):
            before = _safe_digest(item)
            ids, problem = self._chunk_source(item, w)
            after = None if problem is not None else _safe_digest(item)
            if after is not None and after == before:
                return ids, after, None, sent()
            # This attempt's pending rows are dropped now, its written rows with the stale ones at
            # the end (rows that a later attempt shares are kept: they are listed by then).
            w.stale.update(ids)
            w.batch.chunks = [c for c in w.batch.chunks if c.source != item.source]
            w.batch.moved = [(c, v) for c, v in w.batch.moved if c.source != item.source]
            if after is None:
                return ids, None, problem or "vanished during ingest", sent()
        reason = f"changed while being read ({READ_ATTEMPTS} tries); the next ingest indexes it"
        return ids, None, reason, sent()

    def _compact(self, w: _Write, *, changed: bool) -> None:
        """Brings both stores to the state a clean ingest would leave: LanceDB fragments merged and
        deleted rows dropped; Tantivy written afresh when documents were deleted, so that its BM25
        statistics count only live chunks."""
        if changed:
            checkpoint("compact:before")
            w.table.compact()
        if w.bm25.deleted:
            checkpoint("compact:bm25")
            w.bm25.replace_all(w.table.chunks(w.manifest.live_ids()))
        w.bm25.close()

    def _delete_stale(self, w: _Write) -> None:
        if w.stale:
            # Unlist before deleting: a source skipped above was only dropped from memory so far.
            w.manifest.save(self._layout.manifest)
        checkpoint("stale:before")
        w.table.delete(w.stale)
        checkpoint("stale:table")
        w.bm25.delete(w.stale)
        w.bm25.commit()

    def _reset(self, *, rebuilding: bool) -> Manifest:
        """Manifest first, stores after: a kill in between leaves an empty manifest, which hides
        any leftover rows and makes the next run index everything. `rebuilding` is kept in the
        manifest until the run completes, so that queries can say why the index is incomplete."""
        manifest = Manifest(fingerprint=self._fingerprint, rebuilding=rebuilding)
        manifest.save(self._layout.manifest)
        checkpoint("reset:manifest")
        for folder in (self._layout.lancedb, self._layout.tantivy):
            shutil.rmtree(folder, ignore_errors=True)
        return manifest

    def _repair(self, w: _Write) -> int:
        manifest, table, bm25 = w.manifest, w.table, w.bm25
        table_ids, bm25_ids = table.ids(), bm25.ids()
        orphans = (table_ids | bm25_ids) - manifest.live_ids()
        # A listed source whose rows are gone from either store is indexed again. It is unlisted
        # first, then its surviving rows go with the orphans: were they kept, the rows present in
        # one store would be skipped as already stored and never reach the other one.
        # The intersection is computed once: per source, it made a no-op ingest quadratic (15 min
        # for 50,000 unchanged files).
        in_both = table_ids & bm25_ids
        damaged = [s for s, e in manifest.sources.items() if not in_both.issuperset(e.chunk_ids)]
        for source in damaged:
            del manifest.sources[source]
        if damaged:
            manifest.save(self._layout.manifest)
        live = manifest.live_ids()
        table.delete(table_ids - live)
        bm25.delete(bm25_ids - live)
        if bm25_ids - live:
            bm25.commit()
        return len(orphans) + len(damaged)

    def _plan(self, sources: Sequence[SourceFile], manifest: Manifest) -> tuple[list[SourceFile], int]:
        return plan_sources(sources, manifest)

    def _chunk_source(self, item: SourceFile, w: _Write) -> tuple[list[str], str | None]:
        ids: list[str] = []
        allocator = ChunkIdAllocator(item.source)
        old = w.manifest.sources.get(item.source)
        # Rows this file already has: text that did not change keeps its id (and vector), but its
        # line range, ordinal or heading trail may have moved when text was edited above it.
        previous = w.table.fetch(list(old.chunk_ids)) if old is not None else {}
        documents = _documents(item)
        while True:
            # Only reading and chunking fail the file; a failed write to the index fails the run.
            try:
                document = next(documents, None)
                if document is None:
                    break
                chunks = chunk_document(
                    document, self._tokenizer, self._chunking, start_ordinal=len(ids), ids=allocator
                )
            except (RaggityError, OSError) as exc:
                return ids, str(exc) or exc.__class__.__name__
            ids.extend(c.id for c in chunks)
            w.batch.chunks.extend(c for c in chunks if c.id not in w.stored)
            self._note_moved(chunks, w.stored, previous, w.batch)
            checkpoint("read")
            if len(w.batch.chunks) >= self._batch_chunks:
                self._flush(w)
        if not ids:
            return ids, "no text"
        return ids, None

    @staticmethod
    def _note_moved(
        chunks: list[Chunk], stored: set[str], previous: dict[str, StoredChunk], batch: _Batch
    ) -> None:
        for chunk in chunks:
            row = previous.get(chunk.id)
            if chunk.id in stored and row is not None and row.chunk != chunk:
                batch.moved.append((chunk, row.vector))

    def _rewrite_moved(self, w: _Write) -> None:
        """Replaces moved rows with fresh metadata and their stored vectors: nothing is re-embedded.
        A kill between delete and add leaves listed-but-missing rows, which the next run repairs."""
        moved = w.batch.moved
        ids = [chunk.id for chunk, _ in moved]
        w.table.delete(ids)
        w.bm25.delete(ids)
        w.table.add([chunk for chunk, _ in moved], np.stack([vector for _, vector in moved]))
        w.bm25.add([chunk for chunk, _ in moved])
        w.bm25.commit()
        w.batch.moved = []

    def _flush(self, w: _Write) -> None:
        batch, table, bm25, manifest = w.batch, w.table, w.bm25, w.manifest
        if batch.chunks:
            started = time.perf_counter()
            checkpoint("embed:before")
            vectors = self._embed(batch.chunks)
            checkpoint("embed:after")
            self._embed_seconds += time.perf_counter() - started
            fail_point("lancedb:add")
            table.add(batch.chunks, vectors)
            checkpoint("lancedb:added")
            bm25.add(batch.chunks)
            bm25.commit()
            checkpoint("tantivy:committed")
            tokens = sum(c.n_tokens for c in batch.chunks)
            self._tokens += tokens
            self._written += len(batch.chunks)
            w.stored.update(c.id for c in batch.chunks)
            batch.chunks = []
        if batch.moved:
            self._rewrite_moved(w)
        if batch.finished:
            manifest.sources.update(batch.finished)
            checkpoint("manifest:before")
            manifest.save(self._layout.manifest)
            checkpoint("manifest:after")
            batch.finished = {}

    def _embed(self, chunks: Sequence[Chunk]) -> Vectors:
        return embed_chunks(self._embedder, chunks, self._progress)


def plan_sources(sources: Sequence[SourceFile], manifest: Manifest) -> tuple[list[SourceFile], int]:
    """The sources to (re)read, and how many are unchanged: same size and mtime as recorded, or the
    same content (whose entry then takes the new stamp, in `manifest`)."""
    todo: list[SourceFile] = []
    unchanged = 0
    for item in sources:
        entry = manifest.sources.get(item.source)
        if (
            entry is not None
            and entry.mtime_ns
            and (entry.size, entry.mtime_ns) == (item.size, item.mtime_ns)
        ):
            unchanged += 1
        elif entry is not None and _safe_digest(item) == entry.sha256:
            manifest.sources[item.source] = SourceEntry(
                entry.sha256, item.size, item.mtime_ns, entry.chunk_ids
            )
            unchanged += 1
        else:
            todo.append(item)
    return todo, unchanged


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


def _safe_digest(item: SourceFile) -> str | None:
    try:
        return item.digest()
    except OSError:
        return None
