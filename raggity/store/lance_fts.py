"""BM25 from Lance's own full-text (inverted) index on the chunk table: the keyword backend of an index
on object storage, where a Tantivy folder cannot live.

It answers the same read contract as raggity.store.bm25_index.Bm25Reader (`all_ids`, `search`), so the
retrieval code takes either. The index is built over the `search_text` column (what Tantivy indexes:
the heading trail plus the text) with Tantivy's `en_stem` analysis: split on non-alphanumerics, drop
tokens over 40 bytes, lowercase, English stemming, stopwords kept. Queries go through the same
`lexical_query_text` as Tantivy's, and terms are OR-ed as Tantivy's query parser does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raggity.store.bm25_index import lexical_query_text

SEARCH_COLUMN = "search_text"
# Tantivy's en_stem: SimpleTokenizer, RemoveLongFilter(40), LowerCaser, Stemmer(English).
TOKENIZER = {
    "base_tokenizer": "simple",
    "language": "English",
    "max_token_length": 40,
    "lower_case": True,
    "stem": True,
    "remove_stop_words": False,
    "ascii_folding": False,
    "with_position": False,
}


def create_fts_index(dataset: Any, column: str = SEARCH_COLUMN) -> None:
    """(Re)builds the inverted index over `column`: one Lance commit, so readers see the old index or
    the new one. Rows appended later are still found (Lance scans unindexed fragments), but the index
    is rebuilt at the end of an ingest so that its statistics cover every live row."""
    dataset.create_scalar_index(column, "INVERTED", replace=True, **TOKENIZER)


class LanceFtsReader:
    """Keyword search over one version of the chunk table (the version the dataset was opened at)."""

    def __init__(self, dataset: Any | None, column: str = SEARCH_COLUMN) -> None:
        """`dataset`: a lance.LanceDataset, or None for an index that has no table yet."""
        self._dataset = dataset
        self._column = column

    @classmethod
    def open(
        cls, uri: str, storage_options: Mapping[str, str] | None = None, *, version: int | str | None = None
    ) -> LanceFtsReader:
        import lance  # noqa: PLC0415 - lance loads on first use

        dataset = lance.dataset(uri, version=version, storage_options=dict(storage_options or {}))
        return cls(dataset)

    def all_ids(self) -> set[str]:
        if self._dataset is None:
            return set()
        return set(self._dataset.to_table(columns=["id"])["id"].to_pylist())

    def search(self, text: str, k: int) -> list[tuple[str, float]]:
        terms = lexical_query_text(text)
        if self._dataset is None or not terms or k <= 0:
            return []
        from lance.query import FullTextOperator, MatchQuery  # noqa: PLC0415 - lance loads on first use

        hits = self._dataset.to_table(
            columns=["id", "_score"],
            full_text_query=MatchQuery(terms, self._column, operator=FullTextOperator.OR),
            limit=k,
            disable_scoring_autoprojection=True,
        )
        ids = hits["id"].to_pylist()
        scores = hits["_score"].to_pylist()
        ranked = sorted(zip(ids, scores, strict=True), key=lambda hit: -hit[1])
        return [(chunk_id, float(score)) for chunk_id, score in ranked]
