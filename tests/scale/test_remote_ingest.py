"""The in-process engine into an s3:// index does what it does into a local folder: the same diff,
the same chunks embedded (a changed file's unchanged text keeps its vector), the same committed chunk
ids, each ingest one commit."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import lance

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.store.manifest import Header, load_manifest, parse_header
from raggity.store.object_commit import Commit, current_commit, publish
from raggity.store.object_index import ObjectStoreIndex
from raggity.store.object_store import S3Objects
from raggity.store.sources_table import beside
from raggity.store.uri import IndexLocation
from tests.scale.conftest import S3Server
from tests.support import write_config, write_corpus


def _committed(session: Raggity) -> tuple[int, dict[str, list[str]], set[str]]:
    """CURRENT's version, its manifest's chunk ids per file, and the row ids of that table version."""
    location = session.config.index_location
    objects = S3Objects(location)
    commit = current_commit(objects)
    assert commit is not None
    manifest = ObjectStoreIndex(location).committed()
    sources = {s: list(e.chunk_ids) for s, e in manifest.sources.items()}
    table = lance.dataset(
        location.child("lancedb", "chunks.lance"),
        version=commit.version,
        storage_options=dict(location.storage_options),
    )
    return commit.version, sources, set(table.to_table(columns=["id"])["id"].to_pylist())


def _local_ids(index: Path) -> dict[str, list[str]]:
    return {s: list(e.chunk_ids) for s, e in load_manifest(index / "manifest.json").sources.items()}


def _counts(report: object) -> tuple[object, ...]:
    names = ("added", "changed", "removed", "unchanged", "chunks_written", "tokens_embedded")
    return tuple(getattr(report, name) for name in names)


def test_incremental_ingests_into_s3_match_the_local_engine(s3: S3Server, tmp_path: Path) -> None:
    files = write_corpus(tmp_path / "docs")
    docs = tmp_path / "docs"
    remote = Raggity(
        load_config(write_config(tmp_path / "r", index={"path": s3.prefix(), "storage": s3.storage_options}))
    )
    local = Raggity(load_config(write_config(tmp_path / "l", index={"path": str(tmp_path / "index")})))

    steps: list[Callable[[], object]] = [
        lambda: None,  # the first ingest
        # A paragraph appended: the file's other chunks keep their ids and vectors (not embedded).
        lambda: files["markdown"].write_text(
            files["markdown"].read_text()
            + "\n## Uninstalling\n\nRemove /opt/frobnicator and its bin folder.\n"
        ),
        files["text"].unlink,  # a file removed
        lambda: None,  # nothing changed: nothing embedded, nothing committed
    ]
    versions = []
    for step in steps:
        step()
        by_remote, by_local = remote.ingest([docs]), local.ingest([docs])
        assert _counts(by_remote) == _counts(by_local)
        version, sources, rows = _committed(remote)
        assert sources == _local_ids(tmp_path / "index")
        assert rows == {cid for ids in sources.values() for cid in ids}  # no orphan, no missing row
        versions.append(version)
    assert versions[0] < versions[1] < versions[2]
    assert versions[3] == versions[2]


def _named(location: IndexLocation) -> tuple[Commit, Header]:
    objects = S3Objects(location)
    commit = current_commit(objects)
    assert commit is not None
    found = objects.get(commit.manifest)
    assert found is not None
    return commit, parse_header(found.body.decode(), commit.manifest)


def test_a_changed_file_writes_only_its_row_of_the_sources_table_on_s3(s3: S3Server, tmp_path: Path) -> None:
    files = write_corpus(tmp_path / "docs")
    settled = time.time() - 600  # a file changed the instant it was read is recorded without stamps
    for path in files.values():
        os.utime(path, (settled, settled))
    session = Raggity(
        load_config(write_config(tmp_path, index={"path": s3.prefix(), "storage": s3.storage_options}))
    )
    session.ingest([tmp_path / "docs"])
    location = session.config.index_location
    _, before = _named(location)
    assert before.sources_version is not None
    assert before.files == len(files)
    files["markdown"].write_text(files["markdown"].read_text() + "\nOne more line.\n")
    session.ingest([tmp_path / "docs"])
    _, after = _named(location)
    assert after.sources_version is not None

    uri, options = beside(location.child("lancedb", "chunks.lance")), dict(location.storage_options)
    old = lance.dataset(uri, version=before.sources_version, storage_options=options)
    new = lance.dataset(uri, version=after.sources_version, storage_options=options)
    kept = {f.fragment_id for f in old.get_fragments()}
    appended = [
        s
        for f in new.get_fragments()
        if f.fragment_id not in kept
        for s in f.to_table(columns=["source"])["source"].to_pylist()
    ]
    assert appended == [str(files["markdown"])]
    assert old.count_rows() - sum(f.count_rows() for f in new.get_fragments() if f.fragment_id in kept) == 1


def test_a_manifest_of_format_2_on_s3_still_reads_and_the_next_ingest_writes_the_table(
    s3: S3Server, tmp_path: Path
) -> None:
    settled = time.time() - 600  # stamps recorded by the first ingest: the next one is a no-op
    for path in write_corpus(tmp_path / "docs").values():
        os.utime(path, (settled, settled))
    session = Raggity(
        load_config(write_config(tmp_path, index={"path": s3.prefix(), "storage": s3.storage_options}))
    )
    session.ingest([tmp_path / "docs"])
    location = session.config.index_location
    store = ObjectStoreIndex(location)
    records = store.committed()
    commit, _ = _named(location)
    with store.lock(0.0) as lease:  # what a writer before the sources table published
        publish(
            S3Objects(location), lease, version=commit.version, manifest=records.to_json(), previous=commit
        )
    old, header = _named(location)
    assert header.inline
    assert store.committed().sources == records.sources  # read as before
    assert store.snapshot().manifest.live_ids() == records.live_ids()

    report = session.ingest([tmp_path / "docs"])
    assert (report.added, report.changed, report.chunks_written) == (0, 0, 0)
    upgraded, header = _named(location)
    assert upgraded.etag != old.etag  # a commit, at the same table version
    assert upgraded.version == old.version
    assert not header.inline
    assert header.sources_version is not None
    assert store.committed().sources == records.sources
