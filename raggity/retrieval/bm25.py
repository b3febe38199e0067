"""Lexical retrieval: BM25 over the Tantivy index (a local index) or Lance's full-text index (an index
on object storage)."""

from __future__ import annotations

from typing import Protocol

from raggity.core.types import Candidate, Query
from raggity.retrieval.ranked import committed_pairs, ranked_candidates
from raggity.store.vector_table import VectorTableReader


class KeywordIndex(Protocol):
    """raggity.store.bm25_index.Bm25Reader or raggity.store.lance_fts.LanceFtsReader."""

    def search(self, text: str, k: int) -> list[tuple[str, float]]: ...


class Bm25Retriever:
    """Scores are BM25 scores (unbounded, >= 0); a non-lexical query (HyDE) finds nothing.

    Documents the manifest does not list are skipped, over-fetching by their count (`slack`); with
    `live` None, those without a row in the table (open at a version holding exactly the listed
    chunks): a lookup of the hits' ids, not a list of every id.
    """

    def __init__(
        self,
        index: KeywordIndex,
        table: VectorTableReader,
        live: frozenset[str] | None,
        *,
        slack: int,
        limit: int,
    ) -> None:
        self._index = index
        self._table = table
        self._live = live
        self._slack = slack
        self._limit = limit

    def retrieve(self, query: Query) -> list[Candidate]:
        if not query.lexical:
            return []
        pairs = self._index.search(query.text, self._limit + self._slack)
        live = committed_pairs(pairs, self._table, self._live, self._limit)
        return ranked_candidates(live, self._table, origin=f"bm25:{query.label}", ranked_by="bm25")
