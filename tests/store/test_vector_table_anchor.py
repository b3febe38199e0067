"""The anchor column: stored and read back, and tables written before it existed still read."""

from __future__ import annotations

from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa

from raggity.core.types import Chunk, Location
from raggity.store.vector_table import VectorTableReader, VectorTableWriter

DIM = 4


def vectors(rows: int) -> np.ndarray:
    return np.eye(rows, DIM, dtype=np.float32)


def test_anchor_is_stored_and_read_back(tmp_path: Path) -> None:
    chunks = [
        Chunk(
            "a1",
            "page.html",
            "Return a deep copy.",
            "copy",
            Location(0, 0, anchor="copy.deepcopy"),
            "p",
            0,
            5,
        ),
        Chunk("a2", "notes.md", "Backups.", "", Location(3, 9), "q", 0, 2),
    ]
    VectorTableWriter(tmp_path / "lancedb", DIM).add(chunks, vectors(2))
    reader = VectorTableReader(tmp_path / "lancedb" / "chunks.lance")
    assert {cid: row.chunk for cid, row in reader.fetch(["a1", "a2"]).items()} == {
        "a1": chunks[0],
        "a2": chunks[1],
    }
    assert reader.chunks_of("page.html") == [chunks[0]]
    assert reader.fetch_by_parent(["p"]) == [chunks[0]]


def test_a_table_without_the_anchor_column_reads_as_no_anchor(tmp_path: Path) -> None:
    # The schema of indexes written before anchors existed.
    old = pa.table(
        {
            "id": ["old1"],
            "source": ["notes.md"],
            "text": ["Backups."],
            "heading": [""],
            "parent_id": ["p"],
            "ordinal": pa.array([0], pa.int32()),
            "n_tokens": pa.array([2], pa.int32()),
            "line_start": pa.array([3], pa.int32()),
            "line_end": pa.array([9], pa.int32()),
            "page_start": pa.array([None], pa.int32()),
            "page_end": pa.array([None], pa.int32()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors(1).ravel()), DIM),
        }
    )
    lancedb.connect(str(tmp_path / "lancedb")).create_table("chunks", data=old)
    reader = VectorTableReader(tmp_path / "lancedb" / "chunks.lance")
    expected = Chunk("old1", "notes.md", "Backups.", "", Location(3, 9), "p", 0, 2)
    assert reader.fetch(["old1"])["old1"].chunk == expected
    reader.IN_MEMORY_ROWS = 0
    assert reader.fetch(["old1"])["old1"].chunk == expected
    assert reader.fetch_by_parent(["p"]) == [expected]
    assert reader.chunks_of("notes.md") == [expected]
