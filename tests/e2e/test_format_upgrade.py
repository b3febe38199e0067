"""An index built before anchors and the new HTML and code readers is rebuilt by the next ingest."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.store.manifest import load_header, load_manifest, save_header
from raggity.store.vector_table import VectorTableReader
from tests.support import write_config


def test_an_index_of_format_1_is_rebuilt_with_anchors(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.html").write_text("<h1 id='top'>Title</h1><p>Body text here.</p>", encoding="utf-8")
    session = Raggity(load_config(write_config(tmp_path)))
    session.ingest([docs])
    path = session.layout.manifest
    manifest = load_manifest(path)
    assert manifest.fingerprint is not None
    manifest.fingerprint = replace(manifest.fingerprint, format_version=1)
    save_header(path, manifest, load_header(path).sources_version)

    report = session.ingest([docs])
    assert report.rebuilt
    assert report.added == 1
    [chunk] = VectorTableReader(session.layout.table).chunks_of(str(docs / "page.html"))
    assert chunk.location.cite("page.html") == "page.html#top"
