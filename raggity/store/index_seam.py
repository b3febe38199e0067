"""The index seam: what one ingest needs of an index, whichever store holds it.

An ingest (raggity.pipeline.ingest.sync) runs one algorithm over an `IndexStore`; two stores implement
it as siblings, the way httpx's transports sit under one client:

- `LocalIndex` (store/local_index.py): a folder with a LanceDB table, a Tantivy index and the manifest
  file, which is the commit point of every batch;
- `ObjectStoreIndex` (store/object_index.py): a Lance table on S3 with Lance's own keyword index, a
  writer lease, and one commit per ingest (CURRENT).

Each Protocol below has one job; `IndexWriter` is their sum, what an ingest holds while it writes.
A new store implements these (and `IndexStore`) and is chosen in pipeline/ingest/indexer.py.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol, runtime_checkable

from raggity.core.errors import RaggityError
from raggity.core.types import Chunk
from raggity.core.vectors import Vectors
from raggity.store.compact import CompactReport, cleanup_after_ingest
from raggity.store.layout import IndexLayout
from raggity.store.manifest import Fingerprint, Manifest, SourceEntry
from raggity.store.vector_table import StoredChunk

__all__ = [
    "AppendsRows",
    "Commits",
    "Compacts",
    "DeletesRows",
    "Fingerprint",
    "IndexReader",
    "IndexStore",
    "IndexWriter",
    "LanceTarget",
    "ListsIds",
    "Manifest",
    "MapsFailures",
    "OpensCommitted",
    "OpensWriter",
    "ReadsCommitted",
    "ReadsRows",
    "Resets",
    "SavesProgress",
    "Snapshot",
    "SourceEntry",
    "StoredChunk",
    "StoredIds",
    "TakesLock",
    "WritesRowsElsewhere",
    "cleanup_after_ingest",
]


@dataclass(frozen=True)
class StoredIds:
    """The chunk ids an index's stores hold: in every one of them, and in any one of them (a local
    index has two stores, which a killed ingest can leave out of step; an object-store index one)."""

    everywhere: frozenset[str]
    anywhere: frozenset[str]


class OpensCommitted(Protocol):
    def open(self, *, rebuild: bool) -> Manifest:
        """The manifest of the last commit, which the writer starts from; an empty one for a rebuild
        (it is the documented fix for a damaged manifest, so it must not read it)."""
        ...


class Resets(Protocol):
    def reset(self, manifest: Manifest) -> None:
        """Empties the index, recording `manifest` (no sources, the new fingerprint) first, so that a
        kill in between leaves an index that lists nothing."""
        ...


class ListsIds(Protocol):
    def ids(self) -> StoredIds: ...


class ReadsRows(Protocol):
    def rows(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        """The stored rows (chunk and vector) of `ids`; missing ids are left out."""
        ...


class DeletesRows(Protocol):
    def delete(self, ids: Collection[str]) -> None: ...


class AppendsRows(Protocol):
    def append(self, chunks: Sequence[Chunk], vectors: Vectors) -> None:
        """Adds rows that no reader sees until a manifest listing them is saved or committed."""
        ...


class SavesProgress(Protocol):
    def save(self, manifest: Manifest) -> None:
        """Records progress after a batch: locally the manifest file (the batch's commit point); on
        object storage the writer lease is renewed and nothing becomes visible before commit()."""
        ...


class Commits(Protocol):
    def commit(self, manifest: Manifest, *, changed: bool) -> None:
        """Brings the stores to what a clean ingest leaves (compaction, keyword statistics) and makes
        `manifest` the one readers see. `changed`: rows were added or deleted by this ingest."""
        ...


class IndexWriter(
    OpensCommitted, Resets, ListsIds, ReadsRows, DeletesRows, AppendsRows, SavesProgress, Commits, Protocol
):
    """The one writer of an index during an ingest (its lock or lease is held)."""


@dataclass(frozen=True)
class LanceTarget:
    """Where an engine that writes Lance fragments itself (the Ray stages) commits its rows."""

    uri: str
    storage_options: dict[str, str]
    mode: str  # "create", "overwrite" or "append"


@runtime_checkable
class WritesRowsElsewhere(Protocol):
    def lance_target(self) -> LanceTarget:
        """The table an outside engine appends to in one commit; the writer then counts it written."""
        ...


class TakesLock(Protocol):
    def lock(self, wait_seconds: float) -> AbstractContextManager[Any]:
        """The index's one-writer lock (a flock, or the lease on object storage), waiting this long."""
        ...


class OpensWriter(Protocol):
    def writer(self, dim: int, bm25_tokenizer: str) -> AbstractContextManager[IndexWriter]:
        """The writer, for a caller that holds the lock."""
        ...


class ReadsCommitted(Protocol):
    def committed(self) -> Manifest:
        """The last commit's manifest (empty before the first); IndexStateError if it is damaged."""
        ...


class MapsFailures(Protocol):
    def failure(self, exc: BaseException) -> RaggityError | None:
        """The one-line error for a store failure (full disk, unreachable store), or None."""
        ...


@runtime_checkable
class Compacts(Protocol):
    def compact(self, keep: timedelta, *, wait_seconds: float) -> CompactReport:
        """Deletes the versions no reader can still be reading (replaced more than `keep` ago), never
        the one a reader opens now (store/compact.py); takes the writer lock, waiting this long."""
        ...


class IndexStore(TakesLock, OpensWriter, ReadsCommitted, MapsFailures, Protocol):
    """Where an index lives. `layout`: its local folder, or None on object storage (where the entity
    graph is not built yet)."""

    @property
    def uri(self) -> str: ...

    @property
    def layout(self) -> IndexLayout | None: ...


@dataclass(frozen=True)
class Snapshot:
    """One committed state of an index, as a reader sees it: the manifest and the readers of the
    table and the keyword index at the version it lists."""

    manifest: Manifest
    table: Any  # raggity.store.vector_table.VectorTableReader
    keyword: Any  # Bm25Reader or LanceFtsReader: all_ids() and search(text, k)


class IndexReader(Protocol):
    def snapshot(self) -> Snapshot: ...
