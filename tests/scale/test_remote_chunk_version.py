"""An index on object storage: the manifest CURRENT publishes names CURRENT's table version as holding
exactly its chunks, so a reader opens it without reading any chunk id (issue #45); a manifest published
before it did (no `chunk_table`) is still filtered by its records. Either way rows a later writer
appended are never returned (moto on 127.0.0.1, real Lance)."""

from __future__ import annotations

import json
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.pipeline.search.object_snapshot import ObjectIndexSnapshot
from raggity.store.manifest import parse_header
from raggity.store.object_commit import WriterLease, current_commit, publish, read_manifest_text
from raggity.store.object_index import ObjectStoreIndex
from raggity.store.object_store import S3Objects
from raggity.store.vector_table import VectorTableReader
from tests.s3_server import S3Server
from tests.support import found_in_every_mode, write_config, write_corpus

QUERY = "install the frobnicator"


def _remote(s3: S3Server, folder: Path) -> Raggity:
    return Raggity(
        load_config(write_config(folder, index={"path": s3.prefix(), "storage": s3.storage_options}))
    )


def _orphans(session: Raggity) -> list[str]:
    """Rows appended after CURRENT's version, as a writer killed before its publish leaves them: the
    query's own text and vector, so a reader of the latest version would rank them first."""
    location = session.config.index_location
    uri = location.child("lancedb", "chunks.lance")
    options = dict(location.storage_options)
    latest = lance.dataset(uri, storage_options=options)
    rows = latest.to_table(limit=3).to_pylist()
    vector = [float(x) for x in session.models.embed([QUERY])[0]]
    for n, row in enumerate(rows):
        row.update(id=f"orphan{n}", text=QUERY, search_text=QUERY, vector=vector)
    lance.write_dataset(
        pa.Table.from_pylist(rows, schema=latest.schema), uri, mode="append", storage_options=options
    )
    moved = VectorTableReader(None, dataset=lance.dataset(uri, storage_options=options))
    assert moved.nearest(session.models.embed([QUERY])[0], 1)[0][0].startswith("orphan")
    return [row["id"] for row in rows]


def _returned(session: Raggity) -> set[str]:
    fresh = Raggity(session.config, embedder=session.models.embedder, tokenizer=session.models.tokenizer)
    return found_in_every_mode(fresh, QUERY)


@pytest.mark.parametrize("header", ["named", "old"])
def test_a_reader_of_current_returns_only_committed_rows(s3: S3Server, tmp_path: Path, header: str) -> None:
    write_corpus(tmp_path / "docs")
    session = _remote(s3, tmp_path / "r")
    session.ingest([tmp_path / "docs"])
    location = session.config.index_location
    objects = S3Objects(location)
    commit = current_commit(objects)
    assert commit is not None
    document = json.loads(read_manifest_text(objects, commit))
    assert document["chunk_table"] == {"version": commit.version}
    if header == "old":  # as a raggity before it published: no chunk_table
        del document["chunk_table"]
        with WriterLease(objects) as lease:
            commit = publish(
                objects, lease, version=commit.version, manifest=json.dumps(document), previous=commit
            )
        assert parse_header(read_manifest_text(objects, commit), "test").chunk_version is None
    orphans = _orphans(session)

    listed = ObjectStoreIndex(location).committed().live_ids()
    returned = _returned(session)
    assert returned <= listed
    assert not returned & set(orphans)
    snapshot = ObjectIndexSnapshot(location)
    snapshot.refresh()
    assert (snapshot.filter is None) == (header == "named")
    assert snapshot.live == listed  # the records, read when asked for


def test_an_ingest_takes_the_listed_ids_at_the_exact_version_and_reads_them_past_it(
    s3: S3Server, tmp_path: Path
) -> None:
    """A writer at CURRENT's exact version gives the listed ids as the table's without reading them;
    with a dead writer's rows past it, the table is restored and the ids are read (the rows go)."""
    session = _remote(s3, tmp_path)
    write_corpus(tmp_path / "docs")
    session.ingest([tmp_path / "docs"])
    store = ObjectStoreIndex(session.config.index_location)
    listed = store.committed().live_ids()
    with store.lock(0.0), store.writer(session.models.embedder.dim, "en_stem") as writer:
        writer.open(rebuild=False)
        assert writer.ids().everywhere == listed

    orphans = _orphans(session)
    with store.lock(0.0), store.writer(session.models.embedder.dim, "en_stem") as writer:
        writer.open(rebuild=False)  # restores CURRENT's version: a new one
        assert writer.ids().anywhere == listed
    assert session.ingest([tmp_path / "docs"]).repaired == 0
    assert not set(orphans) & _returned(session)
    # The restored version was published: CURRENT is the table's latest again, and stays so.
    objects, uri = (
        S3Objects(session.config.index_location),
        session.config.index_location.child("lancedb", "chunks.lance"),
    )
    options = dict(session.config.index_location.storage_options)
    for _ in range(2):
        commit = current_commit(objects)
        assert commit is not None
        assert commit.version == lance.dataset(uri, storage_options=options).version
        session.ingest([tmp_path / "docs"])
