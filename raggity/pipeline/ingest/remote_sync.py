"""Brings an index on object storage in step with a set of sources, and commits once (docs/scaling.md).

The local IndexSync's write order (rows, then the manifest file as commit point, then deletions) needs
a rename and a flock; an object store has neither. Here:
  1. take the writer lease (a second writer gets IndexBusyError), read CURRENT, and if a writer died
     after CURRENT's version, restore the table to it (a new Lance version with that content);
  2. the driver diffs the sources against CURRENT's manifest: added, changed, removed, unchanged;
  3. delete the rows of changed and removed files, append the new rows (in-process, or by the Ray
     stages through `RowWriter`), compact, and rebuild Lance's full-text index: all of it Lance
     versions that no reader opens, since readers open the version CURRENT names;
  4. write the manifest to a new object and swap CURRENT to the new version: the one commit point.
A kill anywhere before 4 leaves CURRENT, so readers see the previous complete ingest, and the next
run restores the table to it and converges.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from raggity.config.location import IndexLocation
from raggity.core.errors import ConfigError, RaggityError
from raggity.core.faults import checkpoint
from raggity.core.protocols import Embedder, Tokenizer, Vector
from raggity.core.types import Chunk
from raggity.ingest.chunker import ChunkIdAllocator, ChunkingSettings, chunk_document
from raggity.pipeline.ingest.pace import kind_of
from raggity.pipeline.ingest.ray_engine import chunk_row, chunk_schema
from raggity.pipeline.ingest.sync import (
    BATCH_CHUNKS,
    IngestProgress,
    IngestReport,
    SilentProgress,
    Skipped,
    SourceFile,
    embed_chunks,
    index_fingerprint,
    plan_sources,
)
from raggity.store.lance_fts import create_fts_index
from raggity.store.manifest import Manifest, SourceEntry, parse_manifest
from raggity.store.object_store import S3Objects
from raggity.store.remote_commit import (
    LEASE_SECONDS,
    Commit,
    WriterLease,
    current_commit,
    publish,
    read_manifest_text,
)
from raggity.store.remote_errors import lance_store_error

TABLE_PATH = ("lancedb", "chunks.lance")
# Ids per delete predicate: one Lance version each, and a predicate Lance parses quickly.
DELETE_IDS = 1000
# Tests shorten the lease (a writer renews it between batches) with RAGGITY_LEASE_SECONDS.
LEASE_ENV = "RAGGITY_LEASE_SECONDS"


class RemoteTable:
    """The chunk table of one remote index while a writer holds its lease: appends, deletes, index."""

    def __init__(self, location: IndexLocation, dim: int) -> None:
        self.location = location
        self.uri = location.child(*TABLE_PATH)
        self.options = dict(location.storage_options)
        self.schema = chunk_schema(dim)
        # The next write's mode: "create" (no table yet), "overwrite" (a rebuild), then "append".
        self.mode = "append"

    def open(self, version: int | None = None) -> Any | None:
        import lance  # noqa: PLC0415 - lance loads on first use

        try:
            return lance.dataset(self.uri, version=version, storage_options=self.options)
        except ValueError as exc:
            if "not found" in str(exc).lower():
                return None
            raise

    def append(self, rows: Any) -> None:
        import lance  # noqa: PLC0415 - lance loads on first use

        lance.write_dataset(rows, self.uri, schema=self.schema, mode=self.mode, storage_options=self.options)
        self.mode = "append"

    def delete(self, ids: set[str]) -> None:
        dataset = self.open()
        if dataset is None or not ids:
            return
        ordered = sorted(ids)
        for start in range(0, len(ordered), DELETE_IDS):
            quoted = ", ".join("'" + i.replace("'", "''") + "'" for i in ordered[start : start + DELETE_IDS])
            dataset.delete(f"id IN ({quoted})")

    def vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored vectors of `ids` (missing ones left out), read before their rows are deleted."""
        dataset = self.open()
        found: dict[str, Vector] = {}
        if dataset is None:
            return found
        for start in range(0, len(ids), DELETE_IDS):
            quoted = ", ".join("'" + i.replace("'", "''") + "'" for i in ids[start : start + DELETE_IDS])
            rows = dataset.to_table(columns=["id", "vector"], filter=f"id IN ({quoted})")
            for chunk_id, vector in zip(rows["id"].to_pylist(), rows["vector"].to_pylist(), strict=True):
                found[chunk_id] = np.asarray(vector, dtype=np.float32)
        return found

    def finish(self) -> int:
        """Compacts, rebuilds the full-text index so its statistics cover exactly the live rows, and
        returns the version to publish. A table never written (every file skipped) is created empty."""
        import pyarrow as pa  # noqa: PLC0415 - loads with lance

        if self.mode != "append" or self.open() is None:
            self.append(pa.Table.from_batches([], schema=self.schema))
        dataset = self.open()
        assert dataset is not None  # written just above
        if dataset.count_rows():
            dataset.optimize.compact_files()
            dataset = self.open()
            assert dataset is not None
            create_fts_index(dataset)
            dataset = self.open()
            assert dataset is not None
        return int(dataset.version)


class RowWriter(Protocol):
    """Reads, chunks and embeds the files to (re)index and appends their rows to the table: in this
    process (InProcessRows) or on a Ray cluster (raggity.pipeline.ingest.ray_rows.RayRows)."""

    def write(
        self,
        todo: Sequence[SourceFile],
        table: RemoteTable,
        lease: WriterLease,
        progress: IngestProgress,
        reuse: Mapping[str, Vector],
    ) -> RowsWritten:
        """`reuse`: vectors of chunk ids the changed files had before, which need no embedding."""
        ...


@dataclass
class RowsWritten:
    entries: dict[str, SourceEntry] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    chunks: int = 0
    tokens: int = 0
    embed_seconds: float = 0.0


class InProcessRows:
    """The local engine's reading, chunking and embedding (the same chunk ids), appended in batches;
    the lease is renewed between batches."""

    def __init__(
        self,
        embedder: Embedder,
        tokenizer: Tokenizer,
        chunking: ChunkingSettings,
        *,
        batch_chunks: int = BATCH_CHUNKS,
    ) -> None:
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._chunking = chunking
        self._batch_chunks = batch_chunks

    def write(
        self,
        todo: Sequence[SourceFile],
        table: RemoteTable,
        lease: WriterLease,
        progress: IngestProgress,
        reuse: Mapping[str, Vector],
    ) -> RowsWritten:
        done = RowsWritten()
        pending: list[Chunk] = []

        def flush() -> None:
            if not pending:
                return
            # A changed file's unchanged text keeps its id and its vector, as in the local engine.
            new = [c for c in pending if c.id not in reuse]
            vectors = np.empty((len(pending), self._embedder.dim), dtype=np.float32)
            if new:
                started = time.perf_counter()
                embedded = embed_chunks(self._embedder, new, progress)
                done.embed_seconds += time.perf_counter() - started
                by_id = {c.id: row for c, row in zip(new, embedded, strict=True)}
            else:
                by_id = {}
            for row, chunk in enumerate(pending):
                vectors[row] = reuse[chunk.id] if chunk.id in reuse else by_id[chunk.id]
            table.append(_rows(pending, vectors, table.schema))
            checkpoint("remote:appended")
            done.chunks += len(new)
            done.tokens += sum(c.n_tokens for c in new)
            pending.clear()
            lease.renew()

        for item in todo:
            chunks, digest, problem = self._read(item)
            if digest is None:
                reason = problem or "vanished during ingest"
                done.skipped.append(Skipped(item.source, reason))
                progress.warn(item.source, reason)
            else:
                pending.extend(chunks)
                done.entries[item.source] = SourceEntry(
                    digest, item.size, item.mtime_ns, tuple(c.id for c in chunks)
                )
            new = sum(1 for c in chunks if c.id not in reuse) if digest is not None else 0
            progress.read(kind_of(item.source), item.size, new)
            progress.advanced(1, 0, 0)
            if len(pending) >= self._batch_chunks:
                flush()
        flush()
        return done

    def _read(self, item: SourceFile) -> tuple[list[Chunk], str | None, str | None]:
        """(chunks, digest of the content they came from, None) or ([], None, why it was skipped)."""
        try:
            before = item.digest()
            allocator = ChunkIdAllocator(item.source)
            chunks: list[Chunk] = []
            for document in item.read():
                chunks += chunk_document(
                    document, self._tokenizer, self._chunking, start_ordinal=len(chunks), ids=allocator
                )
            after = item.digest()
        except (RaggityError, OSError) as exc:
            return [], None, str(exc) or exc.__class__.__name__
        if after != before:  # as the local engine after its retries: the next ingest reads it
            return [], None, "changed while being read; the next ingest indexes it"
        if not chunks:
            return [], None, "no text"
        return chunks, after, None


def _rows(chunks: Sequence[Chunk], vectors: Any, schema: Any) -> Any:
    import pyarrow as pa  # noqa: PLC0415 - loads with lance

    columns: dict[str, list[Any]] = {name: [] for name in schema.names if name != "vector"}
    for chunk in chunks:
        for name, value in chunk_row(chunk).items():
            columns[name].append(value)
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    vector = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1])
    return pa.table({**columns, "vector": vector}, schema=schema)


def lease_seconds() -> float:
    return float(os.environ.get(LEASE_ENV) or LEASE_SECONDS)


class RemoteIndexSync:
    """One ingest of `sources` into the index at `location` (an s3:// URI)."""

    def __init__(
        self,
        location: IndexLocation,
        *,
        embedder_identity: str,
        dim: int,
        chunking: ChunkingSettings,
        rows: RowWriter,
        progress: IngestProgress | None = None,
        wait_seconds: float = 0.0,
    ) -> None:
        if chunking.bm25_tokenizer != "en_stem":
            raise ConfigError(
                f"{location.uri}: keyword search on object storage supports bm25_tokenizer = en_stem only",
                'set [retrieval] bm25_tokenizer = "en_stem" for an index at a URI',
            )
        self._location = location
        self._fingerprint = index_fingerprint(embedder_identity, chunking)
        self._dim = dim
        self._rows = rows
        self._progress = progress or SilentProgress()
        self._wait_seconds = wait_seconds

    def run(
        self, sources: Sequence[SourceFile], in_scope: Callable[[str], bool], *, rebuild: bool = False
    ) -> IngestReport:
        try:
            return self._run(sources, in_scope, rebuild=rebuild)
        except (ValueError, OSError, RuntimeError) as exc:
            mapped = lance_store_error(exc, self._location)
            if mapped is None:
                raise
            raise mapped from None

    def _lease(self, objects: S3Objects) -> WriterLease:
        """The writer lease, waiting up to `wait_seconds` for another writer to finish."""
        from raggity.core.errors import IndexBusyError  # noqa: PLC0415 - only the retry needs it

        deadline = time.monotonic() + self._wait_seconds
        while True:
            lease = WriterLease(objects, seconds=lease_seconds())
            try:
                return lease.__enter__()
            except IndexBusyError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(1.0)

    def _run(
        self, sources: Sequence[SourceFile], in_scope: Callable[[str], bool], *, rebuild: bool
    ) -> IngestReport:
        started = time.perf_counter()
        objects = S3Objects(self._location)
        lease = self._lease(objects)
        with contextlib.ExitStack() as held:
            held.push(lease)  # entered by _lease: released however this block ends
            previous = current_commit(objects)
            table = RemoteTable(self._location, self._dim)
            manifest, rebuilt = self._prepare(objects, previous, table, rebuild)
            recorded = dict(manifest.sources)
            diff = _diff(sources, in_scope, manifest)
            reuse: dict[str, Vector] = {}
            if table.mode == "append":
                reuse = table.vectors([cid for ids in diff.old_ids.values() for cid in ids])
                # Before the appends: a changed file's unchanged text keeps its chunk id.
                table.delete(diff.stale)
                checkpoint("remote:deleted")
            todo = diff.todo
            sizes: Counter[str] = Counter()
            for item in todo:
                sizes[kind_of(item.source)] += item.size
            self._progress.planned(len(todo), sizes)
            if previous is not None and table.mode == "append" and not todo and not diff.removed:
                if manifest.sources != recorded:  # only new stamps of unchanged files: same table
                    manifest.last_ingest = time.time()
                    publish(
                        objects,
                        lease,
                        version=previous.version,
                        manifest=manifest.to_json(),
                        previous=previous,
                    )
                return _report(RowsWritten(), 0, 0, diff.unchanged, rebuilt=False, started=started)
            written = self._rows.write(todo, table, lease, self._progress, reuse) if todo else RowsWritten()
            manifest.sources.update(written.entries)
            lease.renew()
            version = table.finish()
            manifest.rebuilding = False
            manifest.last_ingest = time.time()
            checkpoint("remote:publish")
            publish(objects, lease, version=version, manifest=manifest.to_json(), previous=previous)
        changed = len(set(diff.old_ids) & set(written.entries))
        return _report(written, changed, len(diff.removed), diff.unchanged, rebuilt=rebuilt, started=started)

    def _prepare(
        self, objects: S3Objects, previous: Commit | None, table: RemoteTable, rebuild: bool
    ) -> tuple[Manifest, bool]:
        """CURRENT's manifest (empty for a rebuild) and whether this run rebuilds; sets the table's
        first write mode, and brings the table back to CURRENT's version if a writer died after it."""
        manifest = self._manifest(objects, previous, rebuild)
        rebuilt = rebuild or (manifest.fingerprint is not None and manifest.fingerprint != self._fingerprint)
        latest = table.open()
        if rebuilt or manifest.fingerprint is None:
            # One new version with only this run's rows; readers stay on CURRENT's until publish.
            table.mode = "create" if latest is None else "overwrite"
            return Manifest(fingerprint=self._fingerprint), rebuilt
        if latest is None:
            table.mode = "create"
        elif previous is not None and latest.version != previous.version:
            # A writer died after CURRENT's version: its rows go, as a new version of CURRENT's.
            restored = table.open(previous.version)
            assert restored is not None
            restored.restore()
            checkpoint("remote:restored")
        return manifest, rebuilt

    def _manifest(self, objects: S3Objects, previous: Commit | None, rebuild: bool) -> Manifest:
        if previous is None or rebuild:
            return Manifest()
        return parse_manifest(read_manifest_text(objects, previous), f"{self._location.uri} manifest")


@dataclass(frozen=True)
class _Diff:
    """The driver's diff of the sources against CURRENT's manifest (which it updates)."""

    todo: list[SourceFile]
    unchanged: int
    removed: list[str]
    # Rows to delete (of removed and of re-read files), and the ids each re-read file had.
    stale: set[str]
    old_ids: dict[str, tuple[str, ...]]


def _diff(sources: Sequence[SourceFile], in_scope: Callable[[str], bool], manifest: Manifest) -> _Diff:
    current = {s.source for s in sources}
    removed = [s for s in manifest.sources if in_scope(s) and s not in current]
    stale: set[str] = set()
    for source in removed:
        stale.update(manifest.sources.pop(source).chunk_ids)
    todo, unchanged = plan_sources(sources, manifest)
    old_ids: dict[str, tuple[str, ...]] = {}
    for item in todo:
        old = manifest.sources.pop(item.source, None)
        if old is not None:
            stale.update(old.chunk_ids)
            old_ids[item.source] = old.chunk_ids
    return _Diff(todo, unchanged, removed, stale, old_ids)


def _report(
    written: RowsWritten, changed: int, removed: int, unchanged: int, *, rebuilt: bool, started: float
) -> IngestReport:
    return IngestReport(
        added=len(written.entries) - changed,
        changed=changed,
        removed=removed,
        unchanged=unchanged,
        skipped=tuple(written.skipped),
        chunks_written=written.chunks,
        tokens_embedded=written.tokens,
        seconds=time.perf_counter() - started,
        embed_seconds=written.embed_seconds,
        rebuilt=rebuilt,
        repaired=0,
    )
