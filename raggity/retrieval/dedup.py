"""Near-duplicate removal: a candidate too similar to a better-ranked one adds nothing."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from raggity.core.protocols import Vectors


def near_duplicate_mask(vectors: Vectors, threshold: float) -> list[bool]:
    """True for each row to keep: rows are in rank order, and a row is dropped when its cosine
    with any already-kept row is >= threshold. Rows must be L2-normalised."""
    kept: list[int] = []
    keep = []
    for i in range(len(vectors)):
        if kept and float(np.max(vectors[kept] @ vectors[i])) >= threshold:
            keep.append(False)
        else:
            kept.append(i)
            keep.append(True)
    return keep


def dedup_indices(vectors: Sequence[Vectors] | Vectors, threshold: float) -> list[int]:
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.size == 0:
        return []
    return [i for i, keep in enumerate(near_duplicate_mask(matrix, threshold)) if keep]


_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> frozenset[str]:
    """Lowercase word set, split as the keyword query is (store/bm25_index.lexical_query_text)."""
    return frozenset(word.lower() for word in _WORD.findall(text))


def dedup_keeping_terms(
    vectors: Sequence[Vectors] | Vectors, texts: Sequence[str], terms: frozenset[str], threshold: float
) -> list[int]:
    """As dedup_indices, except that a row is kept however close its vector is to a kept row when it
    holds a question term that the kept rows it is close to lack. Templated texts (a mail per meeting,
    a budget table per report, a row per item) embed alike and differ in the very numbers and names
    a question asks for; copies of one text differ in no such word and are still dropped."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.size == 0:
        return []
    kept: list[int] = []
    held: dict[int, frozenset[str]] = {}

    def terms_of(row: int) -> frozenset[str]:
        # Read only for rows that have a near-duplicate: most candidates of a search have none.
        if row not in held:
            held[row] = words(texts[row]) & terms
        return held[row]

    for i in range(len(matrix)):
        # In double precision, as `threshold` is: cast to float32, 0.95 would match 0.94999999.
        close = np.asarray(kept)[(matrix[kept] @ matrix[i]).astype(np.float64) >= threshold] if kept else []
        if len(close) and all(terms_of(i) <= terms_of(int(j)) for j in close):
            continue
        kept.append(i)
    return kept
