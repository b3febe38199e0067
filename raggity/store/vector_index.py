"""The approximate (ANN) vector index of the chunk table, built once the table is large enough for it
to pay, and kept current by every ingest after that (docs/scaling.md#a-vector-index).

Below `min_rows` rows a search is exact: one matrix product over the vector column, read once per
snapshot (VectorTableReader). That costs the whole column in memory and in reading time: at a million
chunks 1.5 GB before the first answer. Above it, ingest builds Lance's IVF_SQ index: a query reads the
centroids, the 8-bit codes (one byte a dimension) of `nprobes` partitions, and the full vectors of
`k * refine_factor` candidates to re-rank them exactly. A BTREE index on `id` comes with it, so that
fetching rows by id (every retriever's candidates) does not scan the id column of a million rows
either.

IVF_SQ replaced IVF_PQ (48 one-byte codes a row) on 27 Nov: at a million rows PQ's codes ranked so
roughly that 1,200 candidates had to be re-ranked by their full vectors (random reads, ~20 of its 27
ms) for recall@30 0.95; SQ's codes reach 0.99 re-ranking 60, in 7 ms, and train in a third of the
time, for 4x the codes (384 bytes a row). docs/scaling.md has the measurements. An index built as
IVF_PQ is still searched (with the PQ pool) until the next ingest trains it again as IVF_SQ.

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
# The index type ingest builds; an index of another type (IVF_PQ, before 27 Nov) is trained again.
VECTOR_INDEX_TYPE = "IVF_SQ"
# What a reading process keeps of the indexes in memory (Lance's default keeps every partition a
# query ever read: at a million rows a long `rag chat` grew to the whole 375 MB of SQ codes, at ten
# million it would grow to 3.75 GB). At a million rows a query took 12 ms with this cap, 8 without.
# Local tables only: on object storage a partition let go is a request again, and its reader keeps
# Lance's default.
INDEX_CACHE_BYTES = 128 * 2**20
# An ingest that adds rows adds a segment to the vector index (see keep_vector_index); past this many,
# the index is trained again, since a query searches every segment.
MAX_SEGMENTS = 8
# Lance's index statistics include every centroid unless told not to (and warn on stderr about it).
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")


@dataclass(frozen=True)
class AnnSearch:
    """How a query searches the index: partitions probed, and candidates re-ranked by their full
    vectors (k times refine_factor). At a million rows (246 partitions) through IVF_SQ, for the 30
    candidates a search asks for, recall@10 / recall@30 against exact search were 0.954 / 0.951 at
    nprobes 10, 0.994 / 0.991 at 20 and 0.995 / 0.995 at 30 (refine 2), and 0.967 / 0.969 at 20
    without re-ranking (docs/scaling.md, `bench/ann_recall.py`).

    `refine_factor` None: 2 through IVF_SQ; through an IVF_PQ index (built before 27 Nov) as many
    as re-rank `pq_pool` candidates whatever k is (its codes needed 1,200 for recall@30 0.95)."""

    nprobes: int = 20
    refine_factor: int | None = None
    pq_pool: int = 1200

    def refine_for(self, k: int, index_type: str = VECTOR_INDEX_TYPE) -> int:
        """The refine factor of a search for `k` rows through an index of `index_type`."""
        if self.refine_factor is not None:
            return self.refine_factor
        if index_type == "IVF_PQ":
            return max(1, -(-self.pq_pool // max(k, 1)))
        return 2


@dataclass(frozen=True)
class IndexUpkeep:
    """What keep_vector_index did: 'exact' (below min_rows, no index), 'built', 'rebuilt' (the
    table outgrew its partitions), 'updated' (new rows added to it) or 'current'."""

    action: str
    rows: int


def index_names(dataset: Any) -> set[str]:
    return {index.name for index in dataset.describe_indices()}


def vector_index_type(dataset: Any) -> str | None:
    """The type of the table's vector index ("IVF_SQ", or "IVF_PQ" for one built before), or None
    without one."""
    if dataset is None:
        return None
    found = [index.index_type for index in dataset.describe_indices() if index.name == VECTOR_INDEX]
    return str(found[0]).upper() if found else None


def partitions(rows: int) -> int:
    return max(1, rows // ROWS_PER_PARTITION)


def build_vector_index(dataset: Any) -> None:
    """IVF_SQ over `vector` (cosine: stored vectors are unit length) and BTREE over `id`, replacing
    any earlier ones."""
    rows = int(dataset.count_rows())
    dataset.create_index(
        "vector",
        VECTOR_INDEX_TYPE,
        name=VECTOR_INDEX,
        metric="cosine",
        replace=True,
        num_partitions=partitions(rows),
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
    and a query searches few segments; so is an index of another type than VECTOR_INDEX_TYPE (an
    IVF_PQ one, built before 27 Nov). A table that shrank below `min_rows` drops the index: exact
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
    if (
        partitions(rows) >= 2 * trained
        or len(stats["indices"]) >= MAX_SEGMENTS
        or vector_index_type(dataset) != VECTOR_INDEX_TYPE
    ):
        build_vector_index(dataset)
        return IndexUpkeep("rebuilt", rows)
    if int(stats["num_unindexed_rows"]) or int(dataset.stats.index_stats(ID_INDEX)["num_unindexed_rows"]):
        dataset.optimize.optimize_indices(num_indices_to_merge=0)
        return IndexUpkeep("updated", rows)
    return IndexUpkeep("current", rows)
