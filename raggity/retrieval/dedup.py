"""Near-duplicate removal: a candidate too similar to a better-ranked one adds nothing."""

from __future__ import annotations

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
