"""The ANN vector index (store/vector_index.py) on a real LanceDB table with a low threshold: built once
the table reaches it, searched through by the reader, kept current by incremental ingests, and
dropped again below it. Recall and latency at scale are bench/scale_index.py's, not these tests'."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from raggity.config.schema import Config, IndexConfig
from raggity.core.types import Chunk, Location
from raggity.pipeline.ingest.indexer import index_store
from raggity.store.local_index import LocalIndex
from raggity.store.vector_index import (
    DEFAULT_MIN_ROWS,
    ID_INDEX,
    MAX_SEGMENTS,
    VECTOR_INDEX,
    VECTOR_INDEX_TYPE,
    AnnSearch,
    build_vector_index,
    index_names,
    keep_vector_index,
    vector_index_type,
)
from raggity.store.vector_table import VectorTableReader, VectorTableWriter

DIM = 32
THRESHOLD = 1500


def _vectors(rng: np.random.Generator, rows: int) -> np.ndarray:
    # Clustered, as embeddings of a corpus are: 40 topics with spread around each.
    centres = np.random.default_rng(1).normal(size=(40, DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, 40, rows)] + 0.5 * rng.normal(size=(rows, DIM)).astype(np.float32)
    unit: np.ndarray = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit


def _chunks(start: int, rows: int) -> list[Chunk]:
    return [
        Chunk(f"c{i:05d}", f"f{i // 50}.md", f"text {i}", "", Location(i + 1, i + 1), f"p{i}", i, 2)
        for i in range(start, start + rows)
    ]


def _exact(vectors: np.ndarray, ids: list[str], query: np.ndarray, k: int) -> list[str]:
    order = np.argsort(-(vectors @ query), kind="stable")[:k]
    return [ids[i] for i in order]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "lancedb"


def _written(folder: Path, chunks: list[Chunk], vectors: np.ndarray) -> VectorTableWriter:
    writer = VectorTableWriter(folder, DIM, vector_index_min_rows=THRESHOLD)
    for start in range(0, len(chunks), 500):  # batched, as an ingest appends
        writer.add(chunks[start : start + 500], vectors[start : start + 500])
    writer.compact()
    return writer


def _reader(folder: Path) -> VectorTableReader:
    return VectorTableReader(folder / "chunks.lance")


def _dataset(folder: Path) -> Any:
    import lance  # noqa: PLC0415 - as the product loads it, on first use

    return lance.dataset(str(folder / "chunks.lance"))


def test_below_the_threshold_search_stays_exact_and_no_index_is_built(folder: Path) -> None:
    rng = np.random.default_rng(2)
    vectors, chunks = _vectors(rng, THRESHOLD - 1), _chunks(0, THRESHOLD - 1)
    _written(folder, chunks, vectors)
    reader = _reader(folder)
    assert not reader.indexed
    assert index_names(_dataset(folder)) == set()
    ids = [c.id for c in chunks]
    for q in rng.integers(0, len(ids), 5):
        assert [cid for cid, _ in reader.nearest(vectors[q], 10)] == _exact(vectors, ids, vectors[q], 10)


def test_at_the_threshold_ingest_builds_the_index_and_search_goes_through_it(folder: Path) -> None:
    rng = np.random.default_rng(3)
    vectors, chunks = _vectors(rng, 2000), _chunks(0, 2000)
    _written(folder, chunks, vectors)
    reader = _reader(folder)
    assert reader.indexed
    assert {VECTOR_INDEX, ID_INDEX} <= index_names(_dataset(folder))
    ids = [c.id for c in chunks]
    overlap = []
    for q in rng.integers(0, len(ids), 20):
        found = reader.nearest(vectors[q], 10)
        assert found[0][0] == ids[q]  # a stored vector finds its own row first
        assert found[0][1] == pytest.approx(1.0, abs=1e-4)  # re-ranked by the full vector: exact cosine
        overlap.append(len({cid for cid, _ in found} & set(_exact(vectors, ids, vectors[q], 10))) / 10)
    assert np.mean(overlap) >= 0.8
    # The rows the index found come back whole, with their own metadata and vector.
    top = reader.nearest(vectors[7], 3)
    fetched = reader.fetch([cid for cid, _ in top])
    for cid, _ in top:
        row = int(cid[1:])
        assert fetched[cid].chunk == chunks[row]
        assert np.allclose(fetched[cid].vector, vectors[row])


def test_incremental_ingest_adds_new_rows_to_the_index(folder: Path) -> None:
    rng = np.random.default_rng(4)
    vectors, chunks = _vectors(rng, 2000), _chunks(0, 2000)
    writer = _written(folder, chunks, vectors)
    more_vectors, more = _vectors(rng, 300), _chunks(2000, 300)
    writer.add(more, more_vectors)
    dataset = _dataset(folder)
    assert keep_vector_index(dataset, THRESHOLD).action == "updated"  # what compact() does next
    dataset = _dataset(folder)
    assert dataset.stats.index_stats(VECTOR_INDEX)["num_unindexed_rows"] == 0
    assert dataset.stats.index_stats(ID_INDEX)["num_unindexed_rows"] == 0
    assert keep_vector_index(dataset, THRESHOLD).action == "current"
    reader = _reader(folder)
    for i in (0, 150, 299):
        assert reader.nearest(more_vectors[i], 10)[0][0] == more[i].id
    assert reader.fetch([more[5].id])[more[5].id].chunk == more[5]
    for i in (0, 1999):  # and the rows of the first ingest are still found
        assert reader.nearest(vectors[i], 10)[0][0] == chunks[i].id


def _segments(folder: Path) -> list[tuple[str, int]]:
    """(uuid, partitions) of each segment of the vector index."""
    stats = _dataset(folder).stats.index_stats(VECTOR_INDEX)
    return [(index["uuid"], int(index["num_partitions"])) for index in stats["indices"]]


def test_an_ingest_that_adds_rows_adds_a_segment_and_leaves_the_trained_one(folder: Path) -> None:
    """Merged into the trained segment (Lance's default, and LanceDB's optimize()), new rows
    re-partitioned it and cost recall at a million rows; a segment of their own keeps it."""
    rng = np.random.default_rng(8)
    vectors, chunks = _vectors(rng, 2000), _chunks(0, 2000)
    writer = _written(folder, chunks, vectors)
    [trained] = _segments(folder)
    more_vectors, more = _vectors(rng, 300), _chunks(2000, 300)
    writer.add(more, more_vectors)
    writer.compact()  # what an ingest's commit runs
    segments = _segments(folder)
    assert segments[0] == trained  # the trained segment itself, not rewritten
    assert len(segments) == 2
    assert _dataset(folder).stats.index_stats(VECTOR_INDEX)["num_unindexed_rows"] == 0
    reader = _reader(folder)
    for i in (0, 299):
        assert reader.nearest(more_vectors[i], 10)[0][0] == more[i].id
    for i in (0, 1999):
        assert reader.nearest(vectors[i], 10)[0][0] == chunks[i].id


def test_past_max_segments_the_index_is_trained_again(folder: Path) -> None:
    rng = np.random.default_rng(9)
    writer = _written(folder, _chunks(0, 2000), _vectors(rng, 2000))
    counts = []
    for n in range(MAX_SEGMENTS):
        writer.add(_chunks(2000 + 50 * n, 50), _vectors(rng, 50))
        writer.compact()
        counts.append(len(_segments(folder)))
    assert counts == [*range(2, MAX_SEGMENTS + 1), 1]
    assert _dataset(folder).stats.index_stats(VECTOR_INDEX)["num_unindexed_rows"] == 0


def test_deleted_rows_leave_the_results(folder: Path) -> None:
    rng = np.random.default_rng(5)
    vectors, chunks = _vectors(rng, 2000), _chunks(0, 2000)
    writer = _written(folder, chunks, vectors)
    gone = [chunks[i].id for i in (10, 11, 500, 1999)]
    writer.delete(gone)
    writer.compact()
    reader = _reader(folder)
    assert reader.indexed
    for i in (10, 11, 500, 1999):
        found = [cid for cid, _ in reader.nearest(vectors[i], 20)]
        assert not set(gone) & set(found)
        assert len(found) == 20
    assert reader.fetch(gone) == {}


def test_a_table_that_outgrows_its_partitions_is_trained_again(folder: Path) -> None:
    rng = np.random.default_rng(6)
    vectors, chunks = _vectors(rng, 2000), _chunks(0, 2000)
    writer = _written(folder, chunks, vectors)
    dataset = _dataset(folder)
    assert dataset.stats.index_stats(VECTOR_INDEX)["indices"][0]["num_partitions"] == 1
    more_vectors, more = _vectors(rng, 6500), _chunks(2000, 6500)
    writer.add(more, more_vectors)
    assert keep_vector_index(_dataset(folder), THRESHOLD).action == "rebuilt"
    stats = _dataset(folder).stats.index_stats(VECTOR_INDEX)
    assert stats["indices"][0]["num_partitions"] == 2
    assert stats["num_unindexed_rows"] == 0


def test_a_table_shrunk_below_the_threshold_drops_the_index(folder: Path) -> None:
    rng = np.random.default_rng(8)
    vectors, chunks = _vectors(rng, 1600), _chunks(0, 1600)
    writer = _written(folder, chunks, vectors)
    assert _reader(folder).indexed
    writer.delete([c.id for c in chunks[:200]])
    writer.compact()
    reader = _reader(folder)
    assert not reader.indexed
    ids = [c.id for c in chunks[200:]]
    assert [cid for cid, _ in reader.nearest(vectors[300], 10)] == _exact(
        vectors[200:], ids, vectors[300], 10
    )


def test_building_twice_replaces_the_index(folder: Path) -> None:
    rng = np.random.default_rng(9)
    vectors, chunks = _vectors(rng, 1600), _chunks(0, 1600)
    _written(folder, chunks, vectors)
    dataset = _dataset(folder)
    build_vector_index(dataset)
    assert sorted(index_names(_dataset(folder))) == sorted([VECTOR_INDEX, ID_INDEX])


def test_the_config_threshold_reaches_an_ingest_into_an_index_folder(tmp_path: Path) -> None:
    """Through the store that ingest chooses (pipeline/ingest/indexer.py): [index]
    vector_index_min_rows decides whether the committed table is searched through an index."""
    rng = np.random.default_rng(10)
    vectors, chunks = _vectors(rng, 1600), _chunks(0, 1600)
    for threshold, indexed in ((1500, True), (5000, False)):
        config = Config(
            index=IndexConfig(path=str(tmp_path / f"index{threshold}"), vector_index_min_rows=threshold)
        )
        store = index_store(config)
        with store.writer(DIM, "en_stem") as writer:
            manifest = writer.open(rebuild=False)
            writer.append(chunks[:800], vectors[:800])
            writer.append(chunks[800:], vectors[800:])
            writer.commit(manifest, changed=True)
        assert isinstance(store, LocalIndex)
        table = store.snapshot().table
        assert table.indexed is indexed
        assert table.nearest(vectors[42], 5)[0][0] == chunks[42].id


def test_the_schema_default_is_the_store_default() -> None:
    assert IndexConfig().vector_index_min_rows == DEFAULT_MIN_ROWS


def test_search_and_upkeep_through_the_index_print_nothing(
    folder: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Lance warns on stderr (which is the user's terminal) about a search that does not ask for
    `_distance`, and about index statistics that include centroids; raggity must do neither."""
    rng = np.random.default_rng(11)
    vectors, chunks = _vectors(rng, 1600), _chunks(0, 1600)
    writer = _written(folder, chunks, vectors)
    writer.add(_chunks(1600, 50), _vectors(rng, 50))
    writer.compact()  # the update path reads the index's statistics
    capfd.readouterr()
    reader = _reader(folder)
    assert reader.indexed
    reader.nearest(vectors[3], 10)
    assert keep_vector_index(_dataset(folder), THRESHOLD).action == "current"
    captured = capfd.readouterr()
    assert captured.err == ""
    assert captured.out == ""


def test_a_search_re_ranks_k_times_the_refine_factor_and_an_ivf_pq_index_its_pool() -> None:
    """Through IVF_SQ a search for 30 candidates re-ranks 60 by their full vectors; through an IVF_PQ
    index (built before 27 Nov) it re-ranks a pool of 1,200 whatever k is, as it did then. A refine
    factor given (as the benchmarks give theirs) is used through either."""
    assert AnnSearch().refine_for(30) == 2
    assert AnnSearch().refine_for(30, "IVF_PQ") * 30 == 1200
    assert AnnSearch().refine_for(7, "IVF_PQ") * 7 >= 1200
    assert AnnSearch(20, 4).refine_for(30, "IVF_SQ") == 4
    assert AnnSearch(20, 80).refine_for(30, "IVF_PQ") == 80


def test_an_ivf_pq_index_of_an_earlier_version_is_searched_and_trained_again_as_ivf_sq(folder: Path) -> None:
    """An index folder written before 27 Nov holds an IVF_PQ index: a reader still searches through
    it, and the next ingest's upkeep trains it again as IVF_SQ, with its rows still found."""
    rng = np.random.default_rng(12)
    vectors, chunks = _vectors(rng, 1600), _chunks(0, 1600)
    _written(folder, chunks, vectors)
    assert vector_index_type(_dataset(folder)) == VECTOR_INDEX_TYPE == "IVF_SQ"
    # The vector index as the earlier version built it (48 codes a row at 384 dimensions; 4 here).
    _dataset(folder).create_index(
        "vector",
        "IVF_PQ",
        name=VECTOR_INDEX,
        metric="cosine",
        replace=True,
        num_partitions=1,
        num_sub_vectors=4,
    )
    assert vector_index_type(_dataset(folder)) == "IVF_PQ"
    before = _reader(folder)
    assert before.indexed
    for q in (3, 700, 1500):
        assert before.nearest(vectors[q], 10)[0][0] == chunks[q].id
    assert keep_vector_index(_dataset(folder), THRESHOLD).action == "rebuilt"
    assert vector_index_type(_dataset(folder)) == "IVF_SQ"
    after = _reader(folder)
    for q in (3, 700, 1500):
        assert after.nearest(vectors[q], 10)[0][0] == chunks[q].id
    assert keep_vector_index(_dataset(folder), THRESHOLD).action == "current"


def test_a_reader_keeps_no_more_of_the_index_in_memory_than_its_cap(folder: Path) -> None:
    """Lance keeps every index partition a query has read unless told otherwise: at a million chunks
    a long-running process grew to hold all of them (docs/scaling.md). A reader holds at most its cap
    (INDEX_CACHE_BYTES unless given), whatever it reads; one with a cap past the index holds it all."""
    rng = np.random.default_rng(13)
    vectors, chunks = _vectors(rng, 2000), _chunks(0, 2000)
    _written(folder, chunks, vectors)
    cap = 16 * 1024
    capped = VectorTableReader(folder / "chunks.lance", index_cache_bytes=cap)
    unbounded = VectorTableReader(folder / "chunks.lance", index_cache_bytes=2**30)
    for q in range(0, 2000, 50):
        for reader in (capped, unbounded):
            assert reader.nearest(vectors[q], 10)[0][0] == chunks[q].id
            assert chunks[q].id in reader.fetch([chunks[q].id])
    assert 0 < capped.index_memory <= cap < unbounded.index_memory
