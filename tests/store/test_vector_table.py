"""The LanceDB chunk table: the in-memory exact search and Lance's own search must agree."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from raggity.core.types import Chunk, Location
from raggity.store.vector_table import VectorTableReader, VectorTableWriter


def _table(tmp_path: Path, rows: int = 300, dim: int = 16) -> tuple[Path, np.ndarray, list[Chunk]]:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(rows, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chunks = [
        Chunk(f"c{i:03d}", "f.md", f"text {i}", "", Location(i + 1, i + 1), f"p{i // 4}", i, 2)
        for i in range(rows)
    ]
    writer = VectorTableWriter(tmp_path / "lancedb", dim)
    writer.add(chunks[:150], vectors[:150])
    writer.add(chunks[150:], vectors[150:])  # two fragments, as batched ingest writes them
    writer.delete(["c010", "c200"])
    return tmp_path / "lancedb" / "chunks.lance", vectors, chunks


def test_in_memory_search_matches_lance_search_and_exact_cosine(tmp_path: Path) -> None:
    path, vectors, chunks = _table(tmp_path)
    in_memory = VectorTableReader(path)
    lance_only = VectorTableReader(path)
    lance_only.IN_MEMORY_ROWS = 0
    deleted = {"c010", "c200"}
    for query in vectors[[3, 77, 151, 299]]:
        expected = [
            c.id
            for c, _ in sorted(zip(chunks, vectors @ query, strict=True), key=lambda p: -p[1])
            if c.id not in deleted
        ][:10]
        fast = in_memory.nearest(query, 10)
        slow = lance_only.nearest(query, 10)
        assert [cid for cid, _ in fast] == expected == [cid for cid, _ in slow]
        assert np.allclose([s for _, s in fast], [s for _, s in slow], atol=1e-5)


def test_fetch_returns_each_rows_own_metadata_and_vector(tmp_path: Path) -> None:
    path, vectors, chunks = _table(tmp_path)
    reader = VectorTableReader(path)
    reader.nearest(vectors[0], 1)  # loads the in-memory matrix
    wanted = ["c299", "c004", "c010", "c151"]  # out of order, and c010 was deleted
    fetched = reader.fetch(wanted)
    assert set(fetched) == {"c299", "c004", "c151"}
    for cid, row in fetched.items():
        index = int(cid[1:])
        assert row.chunk == chunks[index]
        assert np.allclose(row.vector, vectors[index])


def test_cosines_of_chosen_rows_in_memory_and_through_lance(tmp_path: Path) -> None:
    path, vectors, _ = _table(tmp_path)
    in_memory = VectorTableReader(path)
    lance_only = VectorTableReader(path)
    lance_only.IN_MEMORY_ROWS = 0
    query = vectors[42]
    wanted = ["c299", "c004", "c010", "c151", "nope"]  # c010 was deleted, "nope" never existed
    for reader in (in_memory, lance_only):
        cosines = reader.cosines(query, wanted)
        assert set(cosines) == {"c299", "c004", "c151"}
        for cid, value in cosines.items():
            assert value == pytest.approx(float(vectors[int(cid[1:])] @ query), abs=1e-5)


@pytest.mark.parametrize("in_memory_rows", [VectorTableReader.IN_MEMORY_ROWS, 0])
def test_a_table_emptied_by_deletions_finds_nothing(tmp_path: Path, in_memory_rows: int) -> None:
    """Every file deleted and ingested again leaves a committed table with no rows: reshape(0, -1)
    raised "cannot reshape array of size 0" on every search."""
    path, vectors, chunks = _table(tmp_path, rows=4)
    VectorTableWriter(tmp_path / "lancedb", 16).delete([c.id for c in chunks])
    reader = VectorTableReader(path)
    reader.IN_MEMORY_ROWS = in_memory_rows

    assert reader.nearest(vectors[0], 5) == []
    assert reader.cosines(vectors[0], [c.id for c in chunks]) == {}
    assert reader.fetch([c.id for c in chunks]) == {}
