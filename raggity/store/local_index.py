"""An index in a local folder, behind the index seam (store/index_seam.py): a LanceDB table and a
Tantivy index, and the manifest file as the commit point.

Write order, so that a kill at any point leaves an index that answers and that the next run repairs:
rows go to LanceDB, then Tantivy (invisible: the manifest does not list them yet); then the changed
files' records go to the sources table (a version no reader opens: the manifest names the one before)
and the manifest is replaced atomically, naming the new version (save, after every batch: the commit
point); rows no longer listed are deleted last. The checkpoints name the steps for the crash tests
(raggity.core.faults).
"""

from __future__ import annotations

import shutil
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import timedelta
from typing import Any

from raggity.core.errors import IndexStateError, RaggityError, storage_error
from raggity.core.faults import checkpoint, fail_point
from raggity.core.types import Chunk
from raggity.core.vectors import Vectors
from raggity.store.bm25_index import Bm25Reader, Bm25Writer
from raggity.store.compact import CompactReport, compact_local, remove_replaced
from raggity.store.index_seam import IndexWriter, Snapshot, StoredIds
from raggity.store.ingest_lock import IngestLock
from raggity.store.layout import IndexLayout
from raggity.store.manifest import (
    CommittedRecords,
    Header,
    Manifest,
    SourceEntry,
    load_header,
    load_manifest,
    local_records,
    save_header,
)
from raggity.store.ownership import claim_index_folder
from raggity.store.sources_table import SourcesWriter
from raggity.store.vector_index import DEFAULT_MIN_ROWS
from raggity.store.vector_table import StoredChunk, VectorTableReader, VectorTableWriter

# Old LanceDB versions stay this long after they were replaced: long enough for a search that opened
# one to finish reading it, short enough that the index's size follows its content. An ingest through
# the config uses [index] keep_versions_seconds instead (pipeline/ingest/indexer.py).
VERSION_GRACE = timedelta(seconds=10)


class LocalIndex:
    """IndexStore and IndexReader for an index folder."""

    def __init__(
        self,
        layout: IndexLayout,
        *,
        version_grace: timedelta | None = VERSION_GRACE,
        vector_index_min_rows: int = DEFAULT_MIN_ROWS,
    ) -> None:
        """`version_grace`: at each commit, delete versions replaced more than this long ago (None:
        only `rag compact` does)."""
        self._layout = layout
        self._version_grace = version_grace
        self._index_min_rows = vector_index_min_rows
        self._records = CommittedRecords()

    @property
    def uri(self) -> str:
        return str(self._layout.root)

    @property
    def layout(self) -> IndexLayout:
        return self._layout

    def lock(self, wait_seconds: float) -> AbstractContextManager[Any]:
        return IngestLock(self._layout.lock, wait_seconds=wait_seconds)

    @contextmanager
    def writer(self, dim: int, bm25_tokenizer: str) -> Iterator[IndexWriter]:
        claim_index_folder(self._layout)
        writer = LocalIndexWriter(
            self._layout,
            dim,
            bm25_tokenizer,
            self._version_grace,
            vector_index_min_rows=self._index_min_rows,
            records=self._records,
        )
        yield writer

    def committed(self) -> Manifest:
        path = self._layout.manifest
        return self._records.read(load_header(path), lambda header: local_records(header, path))

    def compact(self, keep: timedelta, *, wait_seconds: float) -> CompactReport:
        return compact_local(self._layout, keep, wait_seconds=wait_seconds)

    def failure(self, exc: BaseException) -> RaggityError | None:
        # LanceDB and Tantivy report a full disk or read-only media as ValueError/RuntimeError.
        if not isinstance(exc, OSError | RuntimeError | ValueError):
            return None
        return storage_error(exc, self._layout.root)

    def snapshot(self) -> Snapshot:
        return Snapshot(
            load_manifest(self._layout.manifest),
            VectorTableReader(self._layout.table),
            Bm25Reader(self._layout.tantivy),
        )


class LocalIndexWriter:
    """IndexWriter over the folder's two stores; they are opened on first use, after any reset."""

    def __init__(
        self,
        layout: IndexLayout,
        dim: int,
        bm25_tokenizer: str,
        version_grace: timedelta | None,
        *,
        vector_index_min_rows: int = DEFAULT_MIN_ROWS,
        records: CommittedRecords | None = None,
    ) -> None:
        self._layout = layout
        self._records = records or CommittedRecords()
        self._dim = dim
        self._tokenizer = bm25_tokenizer
        self._version_grace = version_grace
        self._index_min_rows = vector_index_min_rows
        self._opened: tuple[VectorTableWriter, Bm25Writer] | None = None
        self._sources = SourcesWriter(str(layout.sources), {})
        # The committed header and records as opened: ids() may find that the stores hold exactly
        # the listed chunks without reading their ids.
        self._as_opened: tuple[Header, dict[str, SourceEntry]] | None = None

    def _stores(self) -> tuple[VectorTableWriter, Bm25Writer]:
        if self._opened is None:
            self._opened = (
                VectorTableWriter(
                    self._layout.lancedb, self._dim, vector_index_min_rows=self._index_min_rows
                ),
                Bm25Writer(self._layout.tantivy, self._tokenizer),
            )
        return self._opened

    def open(self, *, rebuild: bool) -> Manifest:
        # A run killed inside atomic_write_bytes leaves its temporary sibling; the caller holds the lock.
        for name in (self._layout.manifest.name, self._layout.marker.name):
            for leftover in self._layout.root.glob(f".{name}.*.tmp"):
                leftover.unlink(missing_ok=True)
        if rebuild:
            self._records.forget()
            self._sources.forget()
            return Manifest()
        path = self._layout.manifest
        header = load_header(path)
        try:
            manifest = self._records.read(header, lambda h: local_records(h, path), keep=False)
            # A format-2 manifest lists its records itself: the first save writes every row.
            recorded = {} if header.inline else manifest.sources
            restored = self._sources.start(None if header.inline else header.sources_version, recorded)
        except IndexStateError:
            # The sources table is gone (lancedb/ deleted) or unreadable: with no records, every file
            # is read again and the rows nothing lists go, which ends where a clean ingest does.
            self._sources.forget()
            return header.manifest
        if restored:
            checkpoint("sources:restored")
        self._as_opened = (header, dict(manifest.sources))
        return manifest

    def reset(self, manifest: Manifest) -> None:
        """`manifest` has no records: the document names none, then the folders go."""
        self._sources.forget()
        save_header(self._layout.manifest, manifest, None)
        checkpoint("reset:manifest")
        self._opened = None
        for folder in (self._layout.lancedb, self._layout.tantivy):
            shutil.rmtree(folder, ignore_errors=True)

    def ids(self) -> StoredIds:
        listed = self._proven_listed()
        if listed is not None:
            return StoredIds(listed, listed)
        table, bm25 = self._stores()
        table_ids, bm25_ids = table.ids(), bm25.ids()
        return StoredIds(frozenset(table_ids & bm25_ids), frozenset(table_ids | bm25_ids))

    def _proven_listed(self) -> frozenset[str] | None:
        """The listed chunk ids, when both stores are known to hold exactly them without reading
        theirs (a million ids took about 6 s): the chunk table's latest version is the one the
        manifest names as holding exactly the listed count (so no write since: each Tantivy write
        follows a LanceDB one, and Tantivy has not moved either), and Tantivy counts as many
        documents. By the write order every listed chunk is in both stores, so equal counts leave
        room for no other row. None otherwise (a write since, an index that names no version, rows a
        killed ingest left): the stores are read."""
        if self._as_opened is None:
            return None
        header, records = self._as_opened
        table, bm25 = self._stores()
        named = header.chunk_version
        if named is None or table.exact_version(header.chunks) != named or bm25.documents() != header.chunks:
            return None
        return frozenset(Manifest(sources=records).live_ids())

    def rows(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        return self._stores()[0].fetch(ids)

    def delete(self, ids: Collection[str]) -> None:
        table, bm25 = self._stores()
        table.delete(ids)
        checkpoint("lancedb:deleted")
        bm25.delete(ids)
        bm25.commit()

    def append(self, chunks: Sequence[Chunk], vectors: Vectors) -> None:
        table, bm25 = self._stores()
        fail_point("lancedb:add")
        table.add(chunks, vectors)
        checkpoint("lancedb:added")
        bm25.add(chunks)
        bm25.commit()
        checkpoint("tantivy:committed")

    def save(self, manifest: Manifest) -> None:
        version = self._sources.write(manifest.sources)
        checkpoint("sources:written")
        save_header(self._layout.manifest, manifest, version, self._exact_version(manifest))

    def _exact_version(self, manifest: Manifest) -> int | None:
        """The chunk table's version if it holds exactly the listed chunks (readers then open it
        and read no chunk ids: raggity.pipeline.search.hybrid.IndexSnapshot). Every listed chunk
        is in the table by the write order above, so the count decides."""
        return self._stores()[0].exact_version(manifest.chunk_count())

    def commit(self, manifest: Manifest, *, changed: bool) -> None:
        """LanceDB fragments merged and deleted rows dropped; Tantivy written afresh when documents
        were deleted, so that its BM25 statistics count only live chunks; then the manifest."""
        table, bm25 = self._stores()
        if changed:
            checkpoint("compact:before")
            table.compact()
        if bm25.deleted:
            checkpoint("compact:bm25")
            bm25.replace_all(table.chunks(manifest.live_ids()))
        bm25.close()
        self._sources.write(manifest.sources)
        version = self._sources.compact()
        checkpoint("sources:written")
        save_header(self._layout.manifest, manifest, version, self._exact_version(manifest))
        if self._version_grace is not None:
            table.cleanup(self._version_grace)
            remove_replaced(self._layout.sources, self._version_grace, named=version)
