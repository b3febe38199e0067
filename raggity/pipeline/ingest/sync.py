"""Brings an index in step with a set of sources, over either store (store/index_seam.py): open the
writer at the last commit (reset for a rebuild or a new fingerprint), repair, plan (plan.py), let the
engine write the rows, delete stale rows, commit. docs/architecture.md, "The path of an ingest", walks
through the steps. The store decides what a save and a commit are: locally the manifest file is the
commit point of every batch; on object storage nothing is visible before the one commit at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from raggity.core.faults import checkpoint
from raggity.core.protocols import Embedder
from raggity.core.types import Chunk
from raggity.documents.chunker import ChunkingSettings
from raggity.pipeline.ingest.pace import kind_of
from raggity.pipeline.ingest.plan import index_fingerprint, plan_ingest, rebuilds
from raggity.pipeline.ingest.report import IngestProgress, IngestReport, SilentProgress, Skipped
from raggity.pipeline.ingest.sources import SourceFile
from raggity.store.index_seam import IndexStore, IndexWriter, Manifest, SourceEntry

# The report's types are imported from here by the API.
__all__ = ["IndexSync", "IngestProgress", "IngestReport", "RowWriter", "Skipped", "SyncRun"]


@dataclass
class SyncRun:
    """One run's open writer and what it has learnt so far: the engines read and update these
    together, so they travel as one value."""

    writer: IndexWriter
    manifest: Manifest
    progress: IngestProgress
    # Chunk ids the index holds and lists (a chunk already there is not embedded again).
    stored: set[str] = field(default_factory=set)
    # Rows to delete at the end: of removed files, of changed files' old chunks, of failed reads.
    stale: set[str] = field(default_factory=set)
    # Files read whose rows are all written or queued; listed in the manifest at the next record().
    finished: dict[str, SourceEntry] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    added: int = 0
    changed: int = 0
    chunks_written: int = 0
    tokens_embedded: int = 0
    embed_seconds: float = 0.0

    def finish(self, item: SourceFile, ids: Sequence[str], digest: str, *, new: int) -> None:
        """`item` was read from content with `digest` into the chunks `ids`, `new` of them embedded."""
        old = self.manifest.sources.get(item.source)
        if old is not None:
            self.stale.update(set(old.chunk_ids) - set(ids))
            self.changed += 1
        else:
            self.added += 1
        self.finished[item.source] = SourceEntry(digest, item.size, item.mtime_ns, tuple(ids))
        self._read(item, new)

    def skip(self, item: SourceFile, reason: str, *, new: int = 0) -> None:
        """`item` could not be read: it is unlisted (in memory until the next save) and its rows go;
        `new`: chunks it sent to the embedder before it was given up."""
        self.skipped.append(Skipped(item.source, reason))
        old = self.manifest.sources.pop(item.source, None)
        if old is not None:
            self.stale.update(old.chunk_ids)
        self.progress.warn(item.source, reason)
        self._read(item, new)

    def _read(self, item: SourceFile, new: int) -> None:
        """Each engine's files reach the progress display here, so it counts them alike."""
        self.progress.read(kind_of(item.source), item.size, new)
        self.progress.advanced(1, 0, 0)

    def keep(self, chunks: Sequence[Chunk]) -> None:
        """Chunks of a reread file whose ids the index already holds: their text is unchanged, so they
        keep their vectors and are not embedded again, by either engine. A row whose line range,
        ordinal or heading trail moved (text edited above it) is rewritten with its stored vector; a
        kill between delete and append leaves listed-but-missing rows, which the next run repairs."""
        previous = self.writer.rows([c.id for c in chunks]) if chunks else {}
        moved = [c for c in chunks if c.id in previous and previous[c.id].chunk != c]
        if moved:
            self.writer.delete([c.id for c in moved])
            self.writer.append(moved, np.stack([previous[c.id].vector for c in moved]))

    def record(self) -> None:
        """Lists the finished files, whose rows are written by now: a batch's commit point locally."""
        if self.finished:
            self.manifest.sources.update(self.finished)
            checkpoint("manifest:before")
            self.writer.save(self.manifest)
            checkpoint("manifest:after")
            self.finished = {}


class RowWriter(Protocol):
    """An engine: reads, chunks and embeds the sources to (re)read and gets their rows into the
    index, telling `run` of each file (finish or skip). In this process (in_process.InProcessRows) or
    on a Ray cluster (ray_rows.RayRows)."""

    def write(self, todo: Sequence[SourceFile], run: SyncRun) -> None: ...


class IndexSync:
    def __init__(
        self,
        store: IndexStore,
        *,
        embedder: Embedder,
        chunking: ChunkingSettings,
        rows: RowWriter,
        progress: IngestProgress | None = None,
    ) -> None:
        self._store = store
        self._dim = embedder.dim
        self._chunking = chunking
        self._rows = rows
        self._progress = progress or SilentProgress()
        self._fingerprint = index_fingerprint(embedder.identity, chunking)

    def run(
        self, sources: Sequence[SourceFile], in_scope: Callable[[str], bool], *, rebuild: bool = False
    ) -> IngestReport:
        """Brings the index in step with `sources`; the caller holds the store's lock."""
        try:
            with self._store.writer(self._dim, self._chunking.bm25_tokenizer) as writer:
                return self._run(writer, sources, in_scope, rebuild=rebuild)
        except (OSError, RuntimeError, ValueError) as exc:
            mapped = self._store.failure(exc)
            if mapped is None:
                raise
            raise mapped from exc

    def _run(
        self,
        writer: IndexWriter,
        sources: Sequence[SourceFile],
        in_scope: Callable[[str], bool],
        *,
        rebuild: bool,
    ) -> IngestReport:
        started = time.perf_counter()
        manifest = writer.open(rebuild=rebuild)
        rebuilt = rebuilds(rebuild, manifest.fingerprint, self._fingerprint)
        if rebuilt or manifest.fingerprint is None:
            # `rebuilding` stays in the manifest until the run completes, so that queries can say
            # why the index is incomplete.
            manifest = Manifest(fingerprint=self._fingerprint, rebuilding=rebuilt or manifest.rebuilding)
            writer.reset(manifest)
        run = SyncRun(writer, manifest, self._progress)
        repaired = _repair(run)

        plan = plan_ingest(sources, in_scope, manifest)
        run.stale.update(plan.stale)
        if plan.removed:
            writer.save(manifest)
            checkpoint("delete:manifest")
        self._progress.planned(len(plan.todo), plan.sizes())
        if plan.todo:
            self._rows.write(plan.todo, run)
        run.record()

        run.stale -= manifest.live_ids()
        if run.stale:
            # Unlist before deleting: a source skipped above was only dropped from memory so far.
            writer.save(manifest)
        checkpoint("stale:before")
        writer.delete(run.stale)
        manifest.rebuilding = False
        writer.commit(manifest, changed=bool(run.chunks_written or run.stale))
        return IngestReport(
            added=run.added,
            changed=run.changed,
            removed=len(plan.removed),
            unchanged=plan.unchanged,
            skipped=tuple(run.skipped),
            chunks_written=run.chunks_written,
            tokens_embedded=run.tokens_embedded,
            seconds=time.perf_counter() - started,
            embed_seconds=run.embed_seconds,
            rebuilt=rebuilt,
            repaired=repaired,
        )


def _repair(run: SyncRun) -> int:
    """Deletes rows the manifest does not list, and unlists sources whose listed rows are missing
    from any store, so they are read again. Their surviving rows go with the orphans: were they kept,
    the rows present in one store would be skipped as already stored and never reach the other one.
    Returns how many orphans and damaged sources it found."""
    manifest = run.manifest
    ids = run.writer.ids()
    orphans = ids.anywhere - manifest.live_ids()
    # ids.everywhere is computed once: per source, it made a no-op ingest quadratic (15 min for
    # 50,000 unchanged files).
    damaged = [s for s, e in manifest.sources.items() if not ids.everywhere.issuperset(e.chunk_ids)]
    for source in damaged:
        del manifest.sources[source]
    if damaged:
        run.writer.save(manifest)
    live = manifest.live_ids()
    if ids.anywhere - live:
        run.writer.delete(ids.anywhere - live)
    run.stored = set(ids.everywhere & live)
    return len(orphans) + len(damaged)
