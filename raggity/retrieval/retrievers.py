"""Dense (LanceDB) and BM25 (Tantivy) retrievers over live chunks only."""

from __future__ import annotations

from raggity.core.types import Hit, Query
from raggity.store.bm25_index import Bm25Reader
from raggity.store.vector_table import VectorTableReader


class DenseRetriever:
    """Scores are cosine similarities in [-1, 1]. Rows the manifest does not list (left by an
    interrupted ingest) are skipped; the search over-fetches by their count so `limit` still holds."""

    def __init__(self, table: VectorTableReader, live: frozenset[str]) -> None:
        self._table = table
        self._live = live
        self._slack = max(table.rows - len(live), 0)

    def retrieve(self, query: Query, limit: int) -> list[Hit]:
        if query.vector is None:
            return []
        pairs = self._table.nearest(query.vector, limit + self._slack)
        return [Hit(cid, score) for cid, score in pairs if cid in self._live][:limit]


class Bm25Retriever:
    """Scores are Tantivy BM25 scores (unbounded, >= 0)."""

    def __init__(self, index: Bm25Reader, live: frozenset[str], slack: int) -> None:
        self._index = index
        self._live = live
        self._slack = slack

    def retrieve(self, query: Query, limit: int) -> list[Hit]:
        if not query.lexical:
            return []
        pairs = self._index.search(query.text, limit + self._slack)
        return [Hit(cid, score) for cid, score in pairs if cid in self._live][:limit]
