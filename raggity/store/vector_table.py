"""The LanceDB chunk table: vectors, text and metadata, one row per chunk id.

Writes go through lancedb. Reads go through Lance, the table's own storage engine, because
`import lancedb` costs about 2 s and would dominate a cold `rag search`.
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from raggity.core.types import Chunk
from raggity.core.vectors import Vector, Vectors
from raggity.store.chunk_table import COLUMNS, chunk_rows, chunk_schema, present_columns, row_chunk
from raggity.store.sources_table import open_table
from raggity.store.vector_index import (
    DEFAULT_MIN_ROWS,
    INDEX_CACHE_BYTES,
    AnnSearch,
    keep_vector_index,
    vector_index_type,
)

TABLE = "chunks"
# Rows a reader keeps after fetching them: a few hundred questions' worth of candidates.
_REMEMBERED_ROWS = 10_000


def committed(table: Path) -> bool:
    """False for a table folder whose first write never committed a version (a killed ingest)."""
    return (table / "_versions").is_dir() and any((table / "_versions").iterdir())


def _quoted(ids: Iterable[str]) -> str:
    return ", ".join("'" + i.replace("'", "''") + "'" for i in ids)


class VectorTableWriter:
    def __init__(self, folder: Path, dim: int, *, vector_index_min_rows: int = DEFAULT_MIN_ROWS) -> None:
        import lancedb  # noqa: PLC0415 - lance loads on first use

        folder.mkdir(parents=True, exist_ok=True)
        self._db = lancedb.connect(str(folder))
        self._dim = dim
        self._index_min_rows = vector_index_min_rows
        self._table: Any = None
        if TABLE in self._db.list_tables().tables:
            if committed(folder / f"{TABLE}.lance"):
                self._table = self._db.open_table(TABLE)
            else:  # the first write was killed before its commit: nothing readable in it
                shutil.rmtree(folder / f"{TABLE}.lance")

    def fetch(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        return fetch_rows(None if self._table is None else self._table.to_lance(), ids)

    def exact_version(self, listed: int) -> int | None:
        """The table's version when it holds exactly `listed` rows, else None; for the manifest to
        name (store/manifest.py, `chunk_version`). The caller writes in the order that keeps every
        listed chunk in the table (store/local_index.py), so a count of exactly the listed ones
        means no other row, and a reader of that version needs no list of ids to hide others."""
        if self._table is None or listed <= 0:
            return None
        dataset = self._table.to_lance()
        return int(dataset.version) if dataset.count_rows() == listed else None

    def ids(self) -> set[str]:
        if self._table is None:
            return set()
        return set(self._table.to_lance().to_table(columns=["id"])["id"].to_pylist())

    def add(self, chunks: Sequence[Chunk], vectors: Vectors) -> None:
        if not chunks:
            return
        data = chunk_rows(chunks, vectors, chunk_schema(self._dim, search_text=False))
        if self._table is None:
            self._table = self._db.create_table(TABLE, data=data)
        else:
            self._table.add(data)

    def delete(self, ids: Iterable[str]) -> None:
        pending = sorted(set(ids))
        if self._table is None or not pending:
            return
        for start in range(0, len(pending), 500):
            self._table.delete(f"id IN ({_quoted(pending[start : start + 500])})")

    def compact(self) -> None:
        """Merges the small fragments that per-batch appends leave behind, and drops deleted rows;
        then builds, updates or drops the vector index by the table's size (store/vector_index.py).
        Old versions stay until cleanup(): they are what concurrent readers may still be reading."""
        if self._table is not None:
            # Lance's compaction, not LanceDB's optimize(): that one also merges new rows into the
            # vector index's segment, which cost recall (store/vector_index.py, keep_vector_index).
            dataset = self._table.to_lance()
            dataset.optimize.compact_files()  # moves `dataset` to the compacted version
            dataset.cleanup_old_versions(older_than=timedelta(days=7))  # as optimize() pruned
            keep_vector_index(dataset, self._index_min_rows)
            # Compacted and indexed through Lance: this handle must see that version.
            self._table = self._db.open_table(TABLE)

    def cleanup(self, grace: timedelta) -> None:
        """Deletes the files of every version replaced more than `grace` ago, and files a killed
        write left behind (safe: the caller holds the ingest lock, so no other writer exists).

        A reader opens the version that is latest at that moment and reads it for milliseconds; a
        version replaced `grace` ago can have no reader left, so the index's size follows its content.
        """
        if self._table is None:
            return
        versions = sorted(self._table.list_versions(), key=lambda v: int(v["version"]))
        if len(versions) < 2:
            # Nothing was replaced (a no-op ingest at the last one's version); Lance's cleanup would
            # still list every data file (2 s at a million chunks). A killed write's files, which
            # it would also remove, are removed by the next ingest that writes.
            return
        now = datetime.now(versions[-1]["timestamp"].tzinfo)
        # The oldest version still in use is the first one whose successor appeared within `grace`.
        keep_from = next(
            (old for old, new in itertools.pairwise(versions) if now - new["timestamp"] < grace),
            versions[-1],
        )
        # Lance measures from its own, slightly later clock: a margin keeps `keep_from` itself
        # (the latest version is never removed, so it needs none).
        margin = timedelta(0) if keep_from is versions[-1] else timedelta(seconds=1)
        older_than = max(now - keep_from["timestamp"] + margin, timedelta(0))
        self._table.to_lance().cleanup_old_versions(older_than=older_than, delete_unverified=True)

    def chunks(self, ids: AbstractSet[str], *, batch_rows: int = 2048) -> Iterator[list[Chunk]]:
        """The stored chunks with these ids, in batches, read without their vectors."""
        if self._table is None:
            return
        for batch in self._table.to_lance().to_batches(columns=COLUMNS, batch_size=batch_rows):
            found = [row_chunk(row) for row in batch.to_pylist() if row["id"] in ids]
            if found:
                yield found


@dataclass(frozen=True)
class StoredChunk:
    chunk: Chunk
    vector: Vectors


class VectorTableReader:
    """Read-only view of the table at the version that was latest when it was opened.

    A table with a vector index (ingest builds one above `[index] vector_index_min_rows`:
    store/vector_index.py) is searched through it, and its vector column is never read whole. Other
    tables up to IN_MEMORY_ROWS rows are searched exactly with one matrix product over the vector
    column, read once per snapshot: on SciFact (9,600 rows) that takes under a millisecond where
    Lance's scan-based search took ~40 ms. Larger ones use Lance's exact scan.
    """

    IN_MEMORY_ROWS = 200_000

    def __init__(
        self,
        table: Path | None,
        *,
        dataset: Any = None,
        ann: AnnSearch | None = None,
        version: int | None = None,
        index_cache_bytes: int = INDEX_CACHE_BYTES,
    ) -> None:
        """The table in the folder `table` at `version` (None: the latest), or (table None)
        `dataset`: a lance.LanceDataset already open at one version, as an index on object storage
        opens it, or None for no table. `ann`: how queries search the vector index, when the table
        has one. A `version` the table no longer has raises LookupError. `index_cache_bytes`: how
        much of the folder's table's indexes the reader keeps in memory (store/vector_index.py)."""
        if table is not None:
            # A version the table no longer has raises LookupError (sources_table.open_table).
            dataset = (
                open_table(str(table), {}, version, index_cache_bytes=index_cache_bytes)
                if committed(table)
                else None
            )
        self._dataset: Any = dataset
        self._ann = ann or AnnSearch()
        # The type of the table's vector index ("" for none), asked on first use.
        self._index_type: str | None = None
        self._matrix: Vectors | None = None
        self._ids: list[str] = []
        self._position: dict[str, int] = {}
        # Rows already read from this snapshot: the leaf retrievers and dedup ask for overlapping ids.
        self._rows: dict[str, StoredChunk] = {}

    @property
    def rows(self) -> int:
        return 0 if self._dataset is None else int(self._dataset.count_rows())

    @property
    def index_memory(self) -> int:
        """Bytes of the table's indexes this reader holds in memory (at most its index_cache_bytes,
        for a table it opened from a folder)."""
        return 0 if self._dataset is None else int(self._dataset.session().index_cache_size_bytes())

    @property
    def indexed(self) -> bool:
        """Whether queries go through the table's vector index (approximate) rather than exact."""
        if self._index_type is None:
            self._index_type = vector_index_type(self._dataset) or ""
        return bool(self._index_type)

    def _load_vectors(self) -> Vectors | None:
        if (
            self._matrix is None
            and self._dataset is not None
            and self.rows <= self.IN_MEMORY_ROWS
            and not self.indexed
        ):
            table = self._dataset.to_table(columns=["id", "vector"])
            self._ids = table["id"].to_pylist()
            self._position = {cid: i for i, cid in enumerate(self._ids)}
            flat = table["vector"].combine_chunks().values.to_numpy(zero_copy_only=False)
            # A table emptied by deletions has no rows to infer the width from: reshape(0, -1) fails.
            width = len(flat) // len(self._ids) if self._ids else 0
            self._matrix = np.ascontiguousarray(flat, dtype=np.float32).reshape(len(self._ids), width)
        return self._matrix

    def nearest(self, vector: Vector, k: int) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity) pairs, best first; exact search. Stored vectors are unit length."""
        if self._dataset is None or k <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32)
        if self.indexed:
            return self._nearest_indexed(query, k)
        matrix = self._load_vectors()
        if matrix is not None:
            if not len(matrix):
                return []
            scores = matrix @ query
            top = np.argpartition(-scores, min(k, len(scores)) - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
            return [(self._ids[i], float(scores[i])) for i in top]
        result = self._dataset.to_table(
            nearest={"column": "vector", "q": query, "k": k, "metric": "cosine"},
            columns=["id", "_distance"],
        )
        ids = result["id"].to_pylist()
        distances = result["_distance"].to_pylist()
        return [(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]

    def _nearest_indexed(self, query: Vectors, k: int) -> list[tuple[str, float]]:
        """Through the vector index; the rows found are kept, since the caller fetches them next."""
        result = self._dataset.to_table(
            nearest={
                "column": "vector",
                "q": query,
                "k": k,
                "metric": "cosine",
                "nprobes": self._ann.nprobes,
                "refine_factor": self._ann.refine_for(k, self._index_type or ""),
            },
            columns=[*present_columns(self._dataset), "vector", "_distance"],
        )
        pairs = []
        for row in result.to_pylist():
            self._remember(
                row["id"], StoredChunk(row_chunk(row), np.asarray(row["vector"], dtype=np.float32))
            )
            pairs.append((row["id"], 1.0 - float(row["_distance"])))
        return pairs

    def _remember(self, cid: str, row: StoredChunk) -> None:
        if len(self._rows) >= _REMEMBERED_ROWS:
            self._rows.clear()
        self._rows[cid] = row

    def cosines(self, vector: Vector, ids: Sequence[str]) -> dict[str, float]:
        """Cosine similarity of `vector` with each stored chunk of `ids` (missing ids are left out)."""
        query = np.asarray(vector, dtype=np.float32)
        matrix = self._load_vectors()
        if matrix is None:
            return {cid: float(row.vector @ query) for cid, row in fetch_rows(self._dataset, ids).items()}
        positions = {cid: self._position[cid] for cid in ids if cid in self._position}
        if not positions:
            return {}
        scores = matrix[list(positions.values())] @ query
        return {cid: float(score) for cid, score in zip(positions, scores, strict=True)}

    def fetch(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        """Stored rows of `ids` (missing ids left out), remembered for this snapshot's lifetime."""
        missing = [cid for cid in dict.fromkeys(ids) if cid not in self._rows]
        if missing:
            if len(self._rows) + len(missing) > _REMEMBERED_ROWS:
                self._rows.clear()
            self._rows.update(self._read(missing))
        return {cid: self._rows[cid] for cid in ids if cid in self._rows}

    def _read(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        matrix = self._load_vectors()
        if matrix is None:
            return fetch_rows(self._dataset, ids)
        positions = [self._position[cid] for cid in dict.fromkeys(ids) if cid in self._position]
        if not positions:
            return {}
        table = self._dataset.take(positions, columns=present_columns(self._dataset))
        return {
            row["id"]: StoredChunk(row_chunk(row), matrix[self._position[row["id"]]])
            for row in table.to_pylist()
        }

    def fetch_by_parent(self, parent_ids: Sequence[str]) -> list[Chunk]:
        if self._dataset is None or not parent_ids:
            return []
        table = self._dataset.to_table(
            columns=present_columns(self._dataset), filter=f"parent_id IN ({_quoted(parent_ids)})"
        )
        return [row_chunk(row) for row in table.to_pylist()]

    def chunks_of(self, source: str) -> list[Chunk]:
        """Every stored chunk of one file, in file order (listed or not: the caller filters)."""
        if self._dataset is None:
            return []
        table = self._dataset.to_table(
            columns=present_columns(self._dataset), filter=f"source = {_quoted([source])}"
        )
        return sorted((row_chunk(row) for row in table.to_pylist()), key=lambda chunk: chunk.ordinal)

    def all_ids(self) -> list[str]:
        if self._dataset is None:
            return []
        return list(self._dataset.to_table(columns=["id"])["id"].to_pylist())


def fetch_rows(dataset: Any, ids: Sequence[str]) -> dict[str, StoredChunk]:
    """The stored rows of `ids` in `dataset` (a lance.LanceDataset, or None), missing ids left out."""
    result: dict[str, StoredChunk] = {}
    if dataset is None:
        return result
    for start in range(0, len(ids), 1000):
        table = dataset.to_table(
            columns=[*present_columns(dataset), "vector"],
            filter=f"id IN ({_quoted(ids[start : start + 1000])})",
        )
        for row in table.to_pylist():
            result[row["id"]] = StoredChunk(row_chunk(row), np.asarray(row["vector"], dtype=np.float32))
    return result
