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
from raggity.store.manifest import Header, Manifest, parse_header, records_table, with_records
from raggity.store.object_commit import Commit, current_commit, open_version, read_manifest_text
from raggity.store.object_store import S3Objects
from raggity.store.object_store_errors import lance_store_error
from raggity.store.sources_table import beside
from raggity.store.vector_table import VectorTableReader

TABLE_PATH = ("lancedb", "chunks.lance")


class ObjectIndexSnapshot(IndexSnapshot):
    """IndexSnapshot over the commit CURRENT names; the readers are those of a local snapshot, except
    that keyword search is Lance's full-text index, on the same table version. A manifest that names
    CURRENT's version as holding exactly its chunks needs no records read for a search."""

    def __init__(self, location: IndexLocation) -> None:
        # Not IndexSnapshot.__init__: that one opens a local folder's readers.
        self._location = location
        self._objects = S3Objects(location)
        self._commit: Commit | None = None
        self._header = Header(Manifest(), None, 0, 0, inline=True)
        self._records = Manifest()
        self._live = frozenset()
        self._by_source = None
        self.filter = frozenset()
        self.keyword_slack = 0
        self.table = VectorTableReader(None)
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
        header = parse_header(read_manifest_text(self._objects, commit), self._where)
        try:
            dataset = open_version(self._table_uri, commit.version, self._options)
            rows = dataset.count_rows()
            exact = header.chunk_version == commit.version and rows == header.chunks
            self._header, self._records, self._live, self._by_source = header, None, None, None
            # Not exact (written before the manifest named it): the records, read now, filter.
            self.filter = None if exact else self.live
            if exact:  # lost records are the damaged-index line, though a search would not read them
                records_table(header, beside(self._table_uri), self._options, self._where)
        except (ValueError, OSError, RuntimeError) as exc:
            raise _store_error(exc, self._location) from None
        self.table = VectorTableReader(None, dataset=dataset if rows else None)
        self.bm25 = LanceFtsReader(dataset if rows else None)
        # Lance's full-text index is part of the version opened: it holds no other rows.
        self.keyword_slack = 0
        self._commit = commit

    def _read_records(self, header: Header) -> Manifest:
        try:
            return with_records(header, beside(self._table_uri), self._options, self._where)
        except (ValueError, OSError, RuntimeError) as exc:
            raise _store_error(exc, self._location) from None

    @property
    def _table_uri(self) -> str:
        return self._location.child(*TABLE_PATH)

    @property
    def _options(self) -> dict[str, str]:
        return dict(self._location.storage_options)

    @property
    def _where(self) -> str:
        return f"{self._location.uri} manifest"


def _store_error(exc: BaseException, location: IndexLocation) -> RaggityError | BaseException:
    """The one-line error for an object-store failure (a missing table version is the pointer's
    damage, said by raggity.store.object_commit.open_version)."""
    mapped = lance_store_error(exc, location)
    return exc if mapped is None else mapped
