"""The vector index on object storage (moto's S3 server on 127.0.0.1): the commit that publishes an
ingest builds it above `[index] vector_index_min_rows`, readers at CURRENT search through it, and
the next ingest's commit adds its rows to it."""

from __future__ import annotations

import numpy as np

from raggity.config.schema import Config, IndexConfig
from raggity.core.types import Chunk
from raggity.pipeline.ingest.indexer import index_store
from raggity.store.index_seam import Snapshot
from raggity.store.object_index import ObjectStoreIndex
from tests.s3_server import S3Server, _s3_server, s3
from tests.store.test_vector_index import DIM, _chunks, _vectors

__all__ = ["_s3_server", "s3"]


def _ingest(config: Config, chunks: list[Chunk], vectors: np.ndarray) -> None:
    store = index_store(config)
    with store.lock(0.0), store.writer(DIM, "en_stem") as writer:
        manifest = writer.open(rebuild=False)
        writer.append(chunks, vectors)
        writer.commit(manifest, changed=True)


def _snapshot(config: Config) -> Snapshot:
    store = index_store(config)
    assert isinstance(store, ObjectStoreIndex)
    return store.snapshot()


def test_an_index_on_object_storage_gets_the_vector_index_and_keeps_it_current(s3: S3Server) -> None:
    config = Config(
        index=IndexConfig(path=s3.prefix(), storage=s3.storage_options, vector_index_min_rows=1500)
    )
    rng = np.random.default_rng(12)
    vectors, chunks = _vectors(rng, 1600), _chunks(0, 1600)
    _ingest(config, chunks, vectors)
    table = _snapshot(config).table
    assert table.indexed
    assert table.nearest(vectors[9], 10)[0][0] == chunks[9].id

    more_vectors, more = _vectors(rng, 100), _chunks(1600, 100)
    _ingest(config, more, more_vectors)
    snapshot = _snapshot(config)
    assert snapshot.table.indexed
    for i in (0, 99):
        assert snapshot.table.nearest(more_vectors[i], 10)[0][0] == more[i].id
    assert snapshot.table.nearest(vectors[9], 10)[0][0] == chunks[9].id


def test_below_the_threshold_an_index_on_object_storage_stays_exact(s3: S3Server) -> None:
    config = Config(
        index=IndexConfig(path=s3.prefix(), storage=s3.storage_options, vector_index_min_rows=5000)
    )
    rng = np.random.default_rng(13)
    vectors, chunks = _vectors(rng, 1600), _chunks(0, 1600)
    _ingest(config, chunks, vectors)
    table = _snapshot(config).table
    assert not table.indexed
    order = np.argsort(-(vectors @ vectors[5]), kind="stable")[:10]
    assert [cid for cid, _ in table.nearest(vectors[5], 10)] == [chunks[i].id for i in order]
