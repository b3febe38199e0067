"""Dense retrieval: nearest chunks to the query vector in the LanceDB table."""

from __future__ import annotations

from raggity.core.types import Candidate, Query
from raggity.retrieval.ranked import committed_pairs, ranked_candidates
from raggity.store.vector_table import VectorTableReader


class DenseRetriever:
    """Scores are cosine similarities in [-1, 1]; a query without a vector finds nothing.

    Rows the manifest does not list (left by an interrupted ingest) are skipped; the search
    over-fetches by their count so that `limit` still holds. `live` None: the table is open at a
    version holding exactly the listed chunks, so every row it finds is listed.
    """

    def __init__(self, table: VectorTableReader, live: frozenset[str] | None, *, limit: int) -> None:
        self._table = table
        self._live = live
        self._limit = limit
        self._slack = 0 if live is None else max(table.rows - len(live), 0)

    def retrieve(self, query: Query) -> list[Candidate]:
        if query.vector is None:
            return []
        pairs = self._table.nearest(query.vector, self._limit + self._slack)
        live = committed_pairs(pairs, self._table, self._live, self._limit)
        return ranked_candidates(live, self._table, origin=f"dense:{query.label}", ranked_by="dense")
