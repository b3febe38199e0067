"""An index on object storage as the search room reads it: one commit at a time, through CURRENT.

CURRENT names a Lance version of the chunk table and the manifest written with it, which names the
version of the sources table holding its per-file records (design: docs/scaling.md). All are
immutable, so a search, an ask or a long-lived `rag mcp` reads one complete
ingest however long it runs; `refresh()` re-reads CURRENT (one small GET) and moves to a newer commit.
Keyword search uses Lance's full-text index on the same table version (Tantivy cannot live on a store).
"""

from __future__ import annotations

from raggity.config.location import IndexLocation
from raggity.core.errors import IndexStateError, RaggityError
from raggity.pipeline.search.hybrid import IndexSnapshot
from raggity.store.lance_fts import LanceFtsReader
from raggity.store.manifest import Manifest
from raggity.store.object_commit import (
    Commit,
    committed_manifest,
    current_commit,
    open_version,
    read_manifest_text,
)
from raggity.store.object_store import S3Objects
from raggity.store.object_store_errors import lance_store_error
from raggity.store.vector_table import VectorTableReader

TABLE_PATH = ("lancedb", "chunks.lance")


class ObjectIndexSnapshot(IndexSnapshot):
    """IndexSnapshot over the commit CURRENT names; the readers are those of a local snapshot, except
    that keyword search is Lance's full-text index."""

    def __init__(self, location: IndexLocation) -> None:
        # Not IndexSnapshot.__init__: that one opens a local folder's readers.
        self._location = location
        self._objects = S3Objects(location)
        self._commit: Commit | None = None
        self._sources = {}
        self.manifest = Manifest()
        self.table = VectorTableReader(None)
        self.live = frozenset()
        self.bm25 = LanceFtsReader(None)

    @property
    def commit(self) -> Commit | None:
        """The commit the readers are open at (None before the first refresh)."""
        return self._commit

    def refresh(self) -> None:
        commit = current_commit(self._objects)
        if commit is None:
            raise IndexStateError(f"{self._location.uri}: no index yet", "run `rag ingest PATH` first")
        if self._commit is not None and commit.etag == self._commit.etag:
            return
        text = read_manifest_text(self._objects, commit)
        table_uri = self._location.child(*TABLE_PATH)
        options = dict(self._location.storage_options)
        try:
            manifest = committed_manifest(text, table_uri, options, f"{self._location.uri} manifest")
            dataset = open_version(table_uri, commit.version, options)
        except (ValueError, OSError, RuntimeError) as exc:
            raise _store_error(exc, self._location) from None
        self.manifest = manifest
        self._sources = {source: frozenset(e.chunk_ids) for source, e in manifest.sources.items()}
        self.live = frozenset(manifest.live_ids())
        empty = dataset.count_rows() == 0
        self.table = VectorTableReader(None, dataset=None if empty else dataset)
        self.bm25 = LanceFtsReader(None if empty else dataset)
        self._commit = commit


def _store_error(exc: BaseException, location: IndexLocation) -> RaggityError | BaseException:
    """The one-line error for an object-store failure (a missing table version is the pointer's
    damage, said by raggity.store.object_commit.open_version)."""
    mapped = lance_store_error(exc, location)
    return exc if mapped is None else mapped
