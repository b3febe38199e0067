"""The approximate (ANN) vector index of the chunk table, built once the table is large enough for it
to pay, and kept current by every ingest after that (docs/scaling.md#a-vector-index).

Below `min_rows` rows a search is exact: one matrix product over the vector column, read once per
snapshot (VectorTableReader). That costs the whole column in memory and in reading time: at a million
chunks 1.5 GB before the first answer. Above it, ingest builds Lance's IVF_PQ index: a query reads the
centroids, the PQ codes of `nprobes` partitions and the full vectors of `k * refine_factor` candidates
to re-rank them exactly. A BTREE index on `id` comes with it, so that fetching rows by id (every
retriever's candidates) does not scan the id column of a million rows either.

The reader needs no setting: it searches through the index when the table has one, exactly when not.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

VECTOR_INDEX = "vector_idx"
ID_INDEX = "id_idx"
# Chosen by bench/scale_index.py (docs/scaling.md): below this, exact search is fast enough and its
# memory (rows x 384 x 4 bytes) small enough; above, the index build pays for itself.
DEFAULT_MIN_ROWS = 100_000
# Lance's guidance for IVF: about 4,096 rows a partition (a million chunks: 244 partitions).
ROWS_PER_PARTITION = 4096
# Dimensions per PQ sub-vector: 384 / 8 = 48 codes of one byte a row.
SUB_VECTOR_DIMS = 8
# An ingest that adds rows adds a segment to the vector index (see keep_vector_index); past this many,
# the index is trained again, since a query searches every segment.
MAX_SEGMENTS = 8
# Lance's index statistics include every centroid unless told not to (and warn on stderr about it).
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")


@dataclass(frozen=True)
class AnnSearch:
    """How a query searches the index: partitions probed, and candidates re-ranked by their full
    vectors (k times refine_factor). Recall is bounded by the PQ codes more than by the partitions
    probed, so re-ranking carries it: bench/scale_index.py at a million rows (244 partitions),
    recall@10 against exact 0.905 at refine 40 and 0.951 at 80 with nprobes 20 (dense step 27 ms
    median under load); 0.954 with nprobes 40 (docs/scaling.md).

    `refine_factor` None: re-rank `pool` candidates whatever k is (refine = pool / k). A search asks
    for its 30 candidates, and refine 80 re-ranked 2,400 rows' full vectors; 1,200 (refine 40) kept
    recall@10 0.979 and recall@30 0.950 against 0.987 and 0.975, in 30 ms instead of 45
    (bench/ann_recall.py at a million rows, after an incremental ingest: docs/scaling.md)."""

    nprobes: int = 20
    refine_factor: int | None = None
    pool: int = 1200

    def refine_for(self, k: int) -> int:
        """The refine factor of a search for `k` rows."""
        if self.refine_factor is not None:
            return self.refine_factor
        return max(1, -(-self.pool // max(k, 1)))


@dataclass(frozen=True)
class IndexUpkeep:
    """What keep_vector_index did: 'exact' (below min_rows, no index), 'built', 'rebuilt' (the
    table outgrew its partitions), 'updated' (new rows added to it) or 'current'."""

    action: str
    rows: int


def index_names(dataset: Any) -> set[str]:
    return {index.name for index in dataset.describe_indices()}


def has_vector_index(dataset: Any) -> bool:
    return dataset is not None and VECTOR_INDEX in index_names(dataset)


def partitions(rows: int) -> int:
    return max(1, rows // ROWS_PER_PARTITION)


def build_vector_index(dataset: Any) -> None:
    """IVF_PQ over `vector` (cosine: stored vectors are unit length) and BTREE over `id`, replacing
    any earlier ones."""
    rows = int(dataset.count_rows())
    dim = dataset.schema.field("vector").type.list_size
    dataset.create_index(
        "vector",
        "IVF_PQ",
        name=VECTOR_INDEX,
        metric="cosine",
        replace=True,
        num_partitions=partitions(rows),
        num_sub_vectors=max(1, dim // SUB_VECTOR_DIMS),
    )
    dataset.create_scalar_index("id", "BTREE", name=ID_INDEX, replace=True)


def keep_vector_index(dataset: Any, min_rows: int) -> IndexUpkeep:
    """Brings the table's vector index in line with its size, after an ingest's compaction.

    Rows appended since the index was built are searched flat by Lance (correct, but a scan); they are
    indexed as a segment of their own, with the trained centroids and codes (`optimize_indices` with
    `num_indices_to_merge=0`, under a second). Merging them into the existing segment instead (Lance's
    default, and what LanceDB's `optimize()` does) re-partitioned it at a million rows (246 partitions
    to 166) and cost recall: 0.958 -> 0.885 at k=10, refine 80, where a segment of its own kept 0.975
    (docs/scaling.md). Once the table has doubled since its partitions were trained, or has
    MAX_SEGMENTS segments, the index is trained again, so partitions stay near ROWS_PER_PARTITION rows
    and a query searches few segments. A table that shrank below `min_rows` drops the index: exact
    search again.
    """
    rows = int(dataset.count_rows())
    present = index_names(dataset)
    if rows < min_rows:
        for name in (VECTOR_INDEX, ID_INDEX):
            if name in present:
                dataset.drop_index(name)
        return IndexUpkeep("exact", rows)
    if VECTOR_INDEX not in present or ID_INDEX not in present:
        build_vector_index(dataset)
        return IndexUpkeep("built", rows)
    stats = dataset.stats.index_stats(VECTOR_INDEX)
    trained = max(int(index.get("num_partitions", 1)) for index in stats["indices"])
    if partitions(rows) >= 2 * trained or len(stats["indices"]) >= MAX_SEGMENTS:
        build_vector_index(dataset)
        return IndexUpkeep("rebuilt", rows)
    if int(stats["num_unindexed_rows"]) or int(dataset.stats.index_stats(ID_INDEX)["num_unindexed_rows"]):
        dataset.optimize.optimize_indices(num_indices_to_merge=0)
        return IndexUpkeep("updated", rows)
    return IndexUpkeep("current", rows)
