"""An index on object storage, behind the index seam (store/index_seam.py): one Lance table with
Lance's own keyword index, the writer lease, and CURRENT as the one commit point (docs/scaling.md).

The local write order needs a rename and a flock; an object store has neither. Here every write
(appends, deletes, compaction, the keyword index) is a Lance version that no reader opens, since
readers open the version CURRENT names; commit() writes the changed files' records to the sources
table (store/sources_table.py), the manifest naming both versions to a new object, and swaps CURRENT
to the new version. A kill anywhere before that leaves CURRENT as it was, and the next
writer first brings the table back to CURRENT's version (open), so a run converges as locally.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from raggity.config.location import IndexLocation
from raggity.core.errors import ConfigError, IndexBusyError, IndexStateError, RaggityError
from raggity.core.faults import checkpoint
from raggity.core.types import Chunk
from raggity.core.vectors import Vectors
from raggity.store.chunk_table import chunk_rows, chunk_schema
from raggity.store.compact import CompactReport, compact_remote
from raggity.store.index_seam import IndexWriter, LanceTarget, Snapshot, StoredIds
from raggity.store.lance_fts import LanceFtsReader, create_fts_index
from raggity.store.manifest import CommittedRecords, Manifest, SourceEntry, parse_header, with_records
from raggity.store.object_commit import (
    LEASE_SECONDS,
    Commit,
    WriterLease,
    current_commit,
    open_committed,
    open_version,
    publish,
    read_manifest_text,
)
from raggity.store.object_store import S3Objects
from raggity.store.object_store_errors import lance_store_error
from raggity.store.sources_table import SourcesWriter, beside
from raggity.store.vector_index import DEFAULT_MIN_ROWS, keep_vector_index
from raggity.store.vector_table import StoredChunk, VectorTableReader, fetch_rows

TABLE_PATH = ("lancedb", "chunks.lance")
# Ids per delete predicate: one Lance version each, and a predicate Lance parses quickly.
DELETE_IDS = 1000
# Tests shorten the lease (a writer renews it between batches) with RAGGITY_LEASE_SECONDS.
LEASE_ENV = "RAGGITY_LEASE_SECONDS"


def lease_seconds() -> float:
    return float(os.environ.get(LEASE_ENV) or LEASE_SECONDS)


class ObjectStoreIndex:
    """IndexStore and IndexReader for an index at an s3:// URI."""

    def __init__(
        self,
        location: IndexLocation,
        *,
        cleanup: timedelta | None = None,
        vector_index_min_rows: int = DEFAULT_MIN_ROWS,
    ) -> None:
        """`cleanup`: after each publish, delete what was replaced more than this long ago (None:
        only `rag compact` does)."""
        self._location = location
        self._lease: WriterLease | None = None
        self._index_min_rows = vector_index_min_rows
        self._cleanup = cleanup
        self._records = CommittedRecords()

    @property
    def uri(self) -> str:
        return self._location.uri

    @property
    def layout(self) -> None:
        return None

    @property
    def location(self) -> IndexLocation:
        return self._location

    @contextmanager
    def lock(self, wait_seconds: float) -> Iterator[WriterLease]:
        """The writer lease, waiting up to `wait_seconds` for another writer to finish."""
        objects = S3Objects(self._location)
        deadline = time.monotonic() + wait_seconds
        while True:
            lease = WriterLease(objects, seconds=lease_seconds())
            try:
                lease.__enter__()
                break
            except IndexBusyError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(1.0)
        with contextlib.ExitStack() as held:
            held.push(lease)  # entered above: released however this block ends
            self._lease = lease
            try:
                yield lease
            finally:
                self._lease = None

    @contextmanager
    def writer(self, dim: int, bm25_tokenizer: str) -> Iterator[IndexWriter]:
        if bm25_tokenizer != "en_stem":
            raise ConfigError(
                f"{self._location.uri}: keyword search on object storage supports bm25_tokenizer = en_stem only",
                'set [retrieval] bm25_tokenizer = "en_stem" for an index at a URI',
            )
        with contextlib.ExitStack() as held:
            # A caller that did not take the lock: the writer takes it.
            lease = self._lease if self._lease is not None else held.enter_context(self.lock(0.0))
            yield ObjectStoreIndexWriter(
                self._location,
                S3Objects(self._location),
                lease,
                dim,
                self._cleanup,
                vector_index_min_rows=self._index_min_rows,
                records=self._records,
            )

    def compact(self, keep: timedelta, *, wait_seconds: float) -> CompactReport:
        if current_commit(S3Objects(self._location)) is None:  # no lease object in an empty prefix
            raise IndexStateError(f"{self._location.uri}: no index yet", "run `rag ingest PATH` first")
        with self.lock(wait_seconds) as lease:
            return compact_remote(self._location, self._location.child(*TABLE_PATH), lease, keep)

    def committed(self) -> Manifest:
        objects = S3Objects(self._location)
        commit = current_commit(objects)
        if commit is None:
            return Manifest()
        where = f"{self._location.uri} manifest"
        sources = beside(self._location.child(*TABLE_PATH))
        options = dict(self._location.storage_options)
        return self._records.read(
            parse_header(read_manifest_text(objects, commit), where),
            lambda header: with_records(header, sources, options, where),
        )

    def failure(self, exc: BaseException) -> RaggityError | None:
        return lance_store_error(exc, self._location)

    def snapshot(self) -> Snapshot:
        index = open_committed(
            S3Objects(self._location),
            self._location.child(*TABLE_PATH),
            dict(self._location.storage_options),
            where=f"{self._location.uri} manifest",
        )
        dataset = index.dataset if index.dataset.count_rows() else None
        return Snapshot(index.manifest, VectorTableReader(None, dataset=dataset), LanceFtsReader(dataset))


class ObjectStoreIndexWriter:
    """IndexWriter over the chunk table of one remote index while this process holds its lease."""

    def __init__(
        self,
        location: IndexLocation,
        objects: S3Objects,
        lease: WriterLease,
        dim: int,
        cleanup: timedelta | None = None,
        *,
        vector_index_min_rows: int = DEFAULT_MIN_ROWS,
        records: CommittedRecords | None = None,
    ) -> None:
        self._location = location
        self._records = records or CommittedRecords()
        self._cleanup = cleanup
        self._objects = objects
        self._lease = lease
        self._index_min_rows = vector_index_min_rows
        self._uri = location.child(*TABLE_PATH)
        self._options = dict(location.storage_options)
        self._schema = chunk_schema(dim, search_text=True)
        self._previous: Commit | None = None
        self._recorded: dict[str, SourceEntry] = {}
        self._sources = SourcesWriter(beside(self._uri), self._options)
        # CURRENT's manifest lists its records itself (format 2): the next commit writes the table.
        self._upgrade = False
        # The next write's mode: "create" (no table yet), "overwrite" (after a reset), then "append".
        self._mode = "append"
        # Whether the table has moved on from CURRENT's version (a new version must be published).
        self._dirty = False
        # Whether open() found the table at the version CURRENT's manifest names as exact.
        self._exact = False

    def _dataset(self, version: int | None = None) -> Any | None:
        import lance  # noqa: PLC0415 - lance loads on first use

        try:
            return lance.dataset(self._uri, version=version, storage_options=self._options)
        except ValueError as exc:
            if "not found" in str(exc).lower():
                return None
            raise

    def open(self, *, rebuild: bool) -> Manifest:
        """CURRENT's manifest (empty for a rebuild); if a writer died after CURRENT's version, the
        table is brought back to it first (a new Lance version with that content)."""
        # A rebuild repairs a damaged CURRENT: it publishes over it (object_commit.recover_commit).
        self._previous = current_commit(self._objects, repair=rebuild)
        latest = self._dataset()
        if latest is None:
            self._mode = "create"
        elif not rebuild and self._previous is not None and latest.version != self._previous.version:
            # A version the table does not have is a damaged pointer, one line (not an assert).
            restored = open_version(self._uri, self._previous.version, self._options)
            restored.restore()
            # Published at the commit, even with nothing else changed: otherwise every later ingest
            # restored it again, one more version past CURRENT's each time.
            self._dirty = True
            checkpoint("remote:restored")
        if self._previous is None or rebuild:
            self._records.forget()
            self._sources.forget()
            return Manifest()
        where = f"{self._location.uri} manifest"
        header = parse_header(read_manifest_text(self._objects, self._previous), where)
        try:
            manifest = self._records.read(
                header, lambda h: with_records(h, self._sources.uri, self._options, where), keep=False
            )
            version = None if header.inline else header.sources_version
            restored_sources = self._sources.start(version, manifest.sources)
        except IndexStateError:
            # Its sources table version is gone: with no records, every file is read again and
            # the rows nothing lists go, as locally (store/local_index.py).
            self._sources.forget()
            self._upgrade = True
            return header.manifest
        self._recorded = dict(manifest.sources)
        # The table is at the version the manifest names as holding exactly the listed chunks (no
        # dead writer's version restored over it): ids() need not read a million ids.
        self._exact = latest is not None and header.chunk_version == latest.version == self._previous.version
        self._upgrade = header.inline
        if restored_sources:
            checkpoint("sources:restored")
        return manifest

    def reset(self, manifest: Manifest) -> None:
        # One new version with only this run's rows; readers stay on CURRENT's until commit().
        self._mode = "create" if self._dataset() is None else "overwrite"
        self._dirty = True
        self._sources.forget()

    def ids(self) -> StoredIds:
        if self._exact and self._mode == "append" and not self._dirty:
            listed = frozenset(Manifest(sources=self._recorded).live_ids())
            return StoredIds(listed, listed)
        dataset = self._dataset() if self._mode == "append" else None
        found = (
            frozenset() if dataset is None else frozenset(dataset.to_table(columns=["id"])["id"].to_pylist())
        )
        return StoredIds(found, found)

    def rows(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        return fetch_rows(self._dataset() if self._mode == "append" else None, ids)

    def delete(self, ids: Collection[str]) -> None:
        dataset = self._dataset() if self._mode == "append" else None
        if dataset is None or not ids:
            return
        ordered = sorted(ids)
        for start in range(0, len(ordered), DELETE_IDS):
            quoted = ", ".join("'" + i.replace("'", "''") + "'" for i in ordered[start : start + DELETE_IDS])
            dataset.delete(f"id IN ({quoted})")
        self._dirty = True
        checkpoint("remote:deleted")

    def append(self, chunks: Sequence[Chunk], vectors: Vectors) -> None:
        self._write(chunk_rows(chunks, vectors, self._schema))
        checkpoint("remote:appended")
        self._lease.renew()

    def _write(self, rows: Any) -> None:
        import lance  # noqa: PLC0415 - lance loads on first use

        lance.write_dataset(
            rows, self._uri, schema=self._schema, mode=self._mode, storage_options=self._options
        )
        self._mode = "append"
        self._dirty = True

    def lance_target(self) -> LanceTarget:
        target = LanceTarget(self._uri, dict(self._options), self._mode)
        self._mode = "append"
        self._dirty = True
        return target

    def save(self, manifest: Manifest) -> None:
        self._lease.renew()

    def commit(self, manifest: Manifest, *, changed: bool) -> None:
        """Publishes `manifest` with the table's new version; with the same version when only new
        stamps of unchanged files were recorded; not at all when nothing changed. The sources table
        gets only the changed files' rows."""
        if not self._dirty and self._previous is not None:
            if manifest.sources == self._recorded and not self._upgrade:
                return
            version = self._previous.version
        else:
            self._lease.renew()
            version = self._finish()
        self._sources.write(manifest.sources)
        sources_version = self._sources.compact()
        manifest.last_ingest = time.time()
        checkpoint("remote:publish")
        document = manifest.header_json(sources_version, self._exact_version(version, manifest))
        publish(self._objects, self._lease, version=version, manifest=document, previous=self._previous)
        if self._cleanup is not None:  # still under the lease: no other writer meanwhile
            checkpoint("remote:published")
            compact_remote(self._location, self._uri, self._lease, self._cleanup)

    def _exact_version(self, version: int, manifest: Manifest) -> int | None:
        """`version` if the table holds exactly the listed chunks there: readers then need no chunk
        ids (raggity.pipeline.search.object_snapshot); see LocalIndexWriter._exact_version."""
        listed = manifest.chunk_count()
        dataset = self._dataset(version) if listed else None
        return version if dataset is not None and dataset.count_rows() == listed else None

    def _finish(self) -> int:
        """Compacts, rebuilds the full-text index so its statistics cover exactly the live rows, and
        returns the version to publish. A table never written (every file skipped) is created empty."""
        import pyarrow as pa  # noqa: PLC0415 - loads with lance

        if self._mode != "append" or self._dataset() is None:
            self._write(pa.Table.from_batches([], schema=self._schema))
        dataset = self._dataset()
        assert dataset is not None  # written just above
        if dataset.count_rows():
            dataset.optimize.compact_files()
            dataset = self._dataset()
            assert dataset is not None
            keep_vector_index(dataset, self._index_min_rows)  # store/vector_index.py
            dataset = self._dataset()
            assert dataset is not None
            create_fts_index(dataset)
            dataset = self._dataset()
            assert dataset is not None
        return int(dataset.version)
