"""The Ray engine's stages on a local Ray cluster give the in-process engine's chunks: the same ids,
rows and (up to float rounding) vectors, written by lance-ray to a table on the S3 server."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pytest

from raggity.config.schema import EmbeddingConfig
from raggity.inference.embedder import OnnxEmbedder
from raggity.inference.tokenizer import HFTokenizer
from raggity.ingest.chunker import ChunkingSettings
from raggity.models.registry import resolve_embedder
from raggity.pipeline.ingest import IndexSync
from raggity.pipeline.sources import file_source, in_roots
from raggity.scale.ray_engine import (
    EMBED_BATCH,
    ChunkerSpec,
    EmbedderSpec,
    RayIngestPlan,
    new_tally,
    tally_report,
    write_chunks,
)
from raggity.store.layout import IndexLayout
from raggity.store.manifest import load_manifest
from tests.scale.conftest import S3Server
from tests.support import write_corpus

DOCS = Path(__file__).resolve().parents[2] / "docs"
# Small chunks: more of them than one embedding batch (ray_engine.EMBED_BATCH), from little text.
CHUNKING = ChunkingSettings(chunk_tokens=64, parent_tokens=256)
ROW_COLUMNS = [
    "id",
    "source",
    "text",
    "heading",
    "parent_id",
    "ordinal",
    "n_tokens",
    "line_start",
    "line_end",
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    write_corpus(root)
    for name in ("retrieval.md", "citations.md"):  # long enough for several embedding batches
        shutil.copy(DOCS / name, root / name)
    (root / "empty.txt").write_text("   \n", encoding="utf-8")  # skipped: no text
    return root


def _in_process(folder: Path, files: Any, config: EmbeddingConfig, index: Path) -> IndexLayout:
    embedder = OnnxEmbedder(
        files.onnx, files.tokenizer, identity=files.identity, max_tokens=config.max_tokens, threads=1
    )
    layout = IndexLayout(index)
    sync = IndexSync(layout, embedder=embedder, tokenizer=HFTokenizer(files.tokenizer), chunking=CHUNKING)
    sources = [file_source(p) for p in sorted(folder.iterdir())]
    report = sync.run(sources, in_roots([folder]))
    assert [s.source for s in report.skipped] == [str(folder / "empty.txt")]
    return layout


def _rows(table: Any) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in table.to_pylist()}


def test_ray_stages_give_the_in_process_chunk_ids_rows_and_vectors(
    ray_cluster: None, s3: S3Server, folder: Path, tmp_path: Path
) -> None:

    config = EmbeddingConfig()
    files = resolve_embedder(config, tmp_path)
    layout = _in_process(folder, files, config, tmp_path / "index")
    local = lance.dataset(str(layout.table)).to_table(columns=[*ROW_COLUMNS, "vector"])

    plan = RayIngestPlan(
        paths=tuple(str(p) for p in sorted(folder.iterdir())),
        chunker=ChunkerSpec(str(files.tokenizer), CHUNKING.chunk_tokens, CHUNKING.parent_tokens),
        embedder=EmbedderSpec(str(files.onnx), str(files.tokenizer), files.identity, config.max_tokens),
        dim=local.schema.field("vector").type.list_size,
        chunk_workers=1,
        embed_workers=2,  # two actors: each loads the model once and embeds part of the batches
        chunk_cpus=0.5,
        embed_cpus=0.5,
        write_cpus=0.25,
    )
    uri = f"{s3.prefix()}/lancedb/chunks.lance"
    tally = new_tally()
    write_chunks(plan, tally, uri, s3.storage_options, mode="create")
    remote = lance.dataset(uri, storage_options=s3.storage_options)
    assert remote.version == 1  # the whole ingest is one commit
    written = remote.to_table(columns=[*ROW_COLUMNS, "vector", "search_text"])

    expected, actual = _rows(local), _rows(written)
    assert len(expected) > EMBED_BATCH  # at least two embedding batches, for the two actors
    assert set(actual) == set(expected)
    for chunk_id, row in expected.items():
        got = actual[chunk_id]
        assert {c: got[c] for c in ROW_COLUMNS} == {c: row[c] for c in ROW_COLUMNS}
        assert np.allclose(got["vector"], row["vector"], atol=1e-5)

    sources, skipped, chunks, tokens = tally_report(tally)
    manifest = load_manifest(layout.manifest)
    assert {s.source: s.chunk_ids for s in sources} == {k: e.chunk_ids for k, e in manifest.sources.items()}
    assert {s.source: s.sha256 for s in sources} == {k: e.sha256 for k, e in manifest.sources.items()}
    assert [source for source, _ in skipped] == [str(folder / "empty.txt")]
    assert chunks == len(expected)
    assert tokens == sum(row["n_tokens"] for row in expected.values())
