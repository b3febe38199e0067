"""The in-process engine into an s3:// index does what it does into a local folder: the same diff,
the same chunks embedded (a changed file's unchanged text keeps its vector), the same committed chunk
ids, each ingest one commit."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import lance

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.store.object_commit import current_commit
from raggity.store.object_store import S3Objects
from tests.scale.conftest import S3Server
from tests.support import write_config, write_corpus


def _committed(session: Raggity) -> tuple[int, dict[str, list[str]], set[str]]:
    """CURRENT's version, its manifest's chunk ids per file, and the row ids of that table version."""
    location = session.config.index_location
    objects = S3Objects(location)
    commit = current_commit(objects)
    assert commit is not None
    found = objects.get(commit.manifest)
    assert found is not None
    sources = {s: e["chunk_ids"] for s, e in json.loads(found.body)["sources"].items()}
    table = lance.dataset(
        location.child("lancedb", "chunks.lance"),
        version=commit.version,
        storage_options=dict(location.storage_options),
    )
    return commit.version, sources, set(table.to_table(columns=["id"])["id"].to_pylist())


def _local_ids(index: Path) -> dict[str, list[str]]:
    data = json.loads((index / "manifest.json").read_text(encoding="utf-8"))
    return {s: e["chunk_ids"] for s, e in data["sources"].items()}


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
