"""The Ray engine's stages on a local Ray cluster give the in-process engine's chunks: the same ids,
rows and (up to float rounding) vectors, written by lance-ray to a table on the S3 server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pytest

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.config.schema import EmbeddingConfig
from raggity.documents.chunker import ChunkingSettings
from raggity.inference.embedder import OnnxEmbedder
from raggity.inference.tokenizer import HFTokenizer
from raggity.models.registry import resolve_embedder
from raggity.pipeline.ingest.in_process import InProcessRows
from raggity.pipeline.ingest.ray_engine import (
    EMBED_BATCH,
    ChunkerSpec,
    EmbedderSpec,
    RayIngestPlan,
    new_tally,
    tally_report,
    write_chunks,
)
from raggity.pipeline.ingest.ray_rows import ray_failure
from raggity.pipeline.ingest.reading import NO_TEXT
from raggity.pipeline.ingest.sources import file_source, in_roots
from raggity.pipeline.ingest.sync import IndexSync
from raggity.store.bm25_index import Bm25Reader
from raggity.store.layout import IndexLayout
from raggity.store.local_index import LocalIndex as LocalStore
from raggity.store.manifest import load_manifest
from raggity.store.object_commit import current_commit, open_committed
from raggity.store.object_index import ObjectStoreIndex
from raggity.store.object_store import S3Objects
from raggity.store.uri import IndexLocation
from raggity.store.vector_table import VectorTableReader
from tests.scale.conftest import S3Server
from tests.support import rag, write_config, write_corpus

WORKTREE = Path(__file__).resolve().parents[2]
DOCS = WORKTREE / "docs"
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


@dataclass(frozen=True)
class LocalIndex:
    layout: IndexLayout
    files: Any
    config: EmbeddingConfig
    embedder: OnnxEmbedder


@pytest.fixture(scope="module")
def local_index(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> LocalIndex:
    """The folder ingested by the in-process engine: the reference for the Ray engine."""
    config = EmbeddingConfig()
    files = resolve_embedder(config, tmp_path_factory.mktemp("base"))
    embedder = OnnxEmbedder(
        files.onnx, files.tokenizer, identity=files.identity, max_tokens=config.max_tokens, threads=1
    )
    layout = _in_process(folder, files, embedder, tmp_path_factory.mktemp("local") / "index")
    return LocalIndex(layout, files, config, embedder)


def _plan(folder: Path, local: LocalIndex) -> RayIngestPlan:
    files = local.files
    return RayIngestPlan(
        paths=tuple((str(p), str(p.resolve()), ()) for p in sorted(folder.iterdir())),
        chunker=ChunkerSpec(str(files.tokenizer), CHUNKING),
        embedder=EmbedderSpec(files, replace(local.config, threads=1)),
        dim=local.embedder.dim,
        chunk_workers=1,
        embed_workers=2,  # two actors: each loads the model once and embeds part of the batches
        chunk_cpus=0.5,
        embed_cpus=0.5,
        write_cpus=0.25,
    )


def _in_process(folder: Path, files: Any, embedder: OnnxEmbedder, index: Path) -> IndexLayout:
    layout = IndexLayout(index)
    rows = InProcessRows(embedder, HFTokenizer(files.tokenizer), CHUNKING)
    sync = IndexSync(LocalStore(layout), embedder=embedder, chunking=CHUNKING, rows=rows)
    sources = [file_source(p) for p in sorted(folder.iterdir())]
    report = sync.run(sources, in_roots([folder]))
    assert [s.source for s in report.skipped] == [str(folder / "empty.txt")]
    return layout


def _rows(table: Any) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in table.to_pylist()}


def test_ray_stages_give_the_in_process_chunk_ids_rows_and_vectors(
    ray_cluster: None, s3: S3Server, folder: Path, local_index: LocalIndex
) -> None:
    layout = local_index.layout
    local = lance.dataset(str(layout.table)).to_table(columns=[*ROW_COLUMNS, "vector"])
    plan = _plan(folder, local_index)
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


QUERIES = [
    "How are citations shown for a PDF page?",
    "bake the loaf in a Dutch oven",
    "reciprocal rank fusion",
    "moons of Jupiter with an ocean",
    "invoice total with tax",
]
_SEARCH_COMMITTED = """
import json, sys
from raggity.store.lance_fts import LanceFtsReader
from raggity.store.object_store import S3Objects
from raggity.store.object_commit import open_committed
from raggity.store.uri import IndexLocation
location = IndexLocation(sys.argv[1], json.loads(sys.argv[2]))
queries, vectors = json.loads(sys.argv[3]), json.loads(sys.argv[4])
index = open_committed(S3Objects(location), location.child("lancedb", "chunks.lance"), dict(location.storage_options))
keyword = [[cid for cid, _ in LanceFtsReader(index.dataset).search(q, 10)] for q in queries]
dense = [index.dataset.to_table(columns=["id"], nearest={"column": "vector", "q": v, "k": 10, "metric": "cosine"},
                                disable_scoring_autoprojection=True)["id"].to_pylist() for v in vectors]
sources = {s: list(e.chunk_ids) for s, e in index.manifest.sources.items()}
print(json.dumps({"keyword": keyword, "dense": dense, "sources": sources, "version": index.commit.version}))
"""


def test_a_ray_rebuild_on_s3_searches_from_a_second_process_like_the_local_index(
    ray_cluster: None, s3: S3Server, folder: Path, local_index: LocalIndex, tmp_path: Path
) -> None:
    layout = local_index.layout
    manifest = load_manifest(layout.manifest)
    session = _session(tmp_path, s3, "ray")
    location = session.config.index_location
    report = session.ingest([folder], rebuild=True)
    assert report.rebuilt
    assert [s.source for s in report.skipped] == [str(folder / "empty.txt")]
    commit = current_commit(S3Objects(location))
    assert commit is not None

    vectors = local_index.embedder.embed(QUERIES)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _SEARCH_COMMITTED,
            location.uri,
            json.dumps(dict(location.storage_options)),
            json.dumps(QUERIES),
            json.dumps(vectors.tolist()),
        ],
        env={**os.environ, "PYTHONPATH": str(WORKTREE)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    remote = json.loads(done.stdout.strip().splitlines()[-1])

    assert remote["version"] == commit.version
    assert remote["sources"] == {s: list(e.chunk_ids) for s, e in manifest.sources.items()}
    bm25, dense = Bm25Reader(layout.tantivy), VectorTableReader(layout.table)
    for query, vector, keyword_ids, dense_ids in zip(
        QUERIES, vectors, remote["keyword"], remote["dense"], strict=True
    ):
        assert dense_ids == [cid for cid, _ in dense.nearest(vector, 10)]
        local_keyword = [cid for cid, _ in bm25.search(query, 10)]
        assert len(keyword_ids) == len(local_keyword) > 0
        assert keyword_ids[0] == local_keyword[0]
        assert len(set(keyword_ids) & set(local_keyword)) >= min(8, len(local_keyword))


class _Recorded:
    """An IngestProgress that keeps the totals a progress bar would show."""

    def __init__(self) -> None:
        self.plan = (0, 0)
        self.files = 0
        self.chunks = 0
        self.warned: list[str] = []

    def planned(self, files: int, sizes: Mapping[str, int]) -> None:
        self.plan = (files, sum(sizes.values()))

    def read(self, kind: str, size: int, chunks: int) -> None:
        pass

    def advanced(self, files: int, chunks: int, tokens: int) -> None:
        self.files += files
        self.chunks += chunks

    def warn(self, source: str, reason: str) -> None:
        self.warned.append(source)


def _session(root: Path, s3: S3Server, engine: str) -> Raggity:
    config = write_config(
        root,
        index={"path": s3.prefix(), "storage": s3.storage_options},
        ingest={
            "engine": engine,
            "chunk_tokens": CHUNKING.chunk_tokens,
            "parent_tokens": CHUNKING.parent_tokens,
        },
    )
    return Raggity(load_config(config))


def _committed_ids(session: Raggity) -> dict[str, tuple[str, ...]]:
    manifest = ObjectStoreIndex(session.config.index_location).committed()
    return {s: e.chunk_ids for s, e in manifest.sources.items()}


def test_rag_ingest_engine_ray_gives_the_in_process_engines_chunks_and_search_results(
    ray_cluster: None, s3: S3Server, folder: Path, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(folder, docs)
    by_ray, in_process = _session(tmp_path / "ray", s3, "ray"), _session(tmp_path / "local", s3, "local")
    progress = _Recorded()
    report = by_ray.ingest([docs], progress=progress)
    local_report = in_process.ingest([docs])

    expected = _committed_ids(in_process)
    assert _committed_ids(by_ray) == expected
    assert report.added == len(expected)
    # A skip reason is worded once (pipeline/ingest/reading.py), whichever engine and store read it.
    skips = [(s.source, s.reason) for s in report.skipped]
    assert (
        skips == [(s.source, s.reason) for s in local_report.skipped] == [(str(docs / "empty.txt"), NO_TEXT)]
    )
    assert progress.chunks == report.chunks_written == sum(len(ids) for ids in expected.values())
    assert progress.plan[0] == progress.files == len(expected) + 1  # the skipped file is done too
    for query in QUERIES:
        assert [c.chunk.id for c in by_ray.search(query).candidates] == [
            c.chunk.id for c in in_process.search(query).candidates
        ], query

    # Incrementally: the driver's diff sends only the changed file to the Ray stages.
    (docs / "recipe.md").write_text("# Flatbread\n\nKnead the dough, rest it, and bake it on a hot stone.\n")
    again = by_ray.ingest([docs])
    in_process.ingest([docs])
    assert (again.added, again.changed, again.removed) == (1, 0, 0)
    assert again.unchanged == len(expected)
    assert _committed_ids(by_ray) == _committed_ids(in_process)
    assert [c.chunk.id for c in by_ray.search("bake on a hot stone").candidates] == [
        c.chunk.id for c in in_process.search("bake on a hot stone").candidates
    ]

    # A changed file: its unchanged chunks keep their vectors under either engine (before, Ray
    # embedded the whole file again), and the rows below the edit move with it.
    edited = docs / "retrieval.md"
    edited.write_text("# Preface\n\nA new opening about kettles.\n\n" + edited.read_text(encoding="utf-8"))
    ray_report, local_report = by_ray.ingest([docs]), in_process.ingest([docs])
    assert (ray_report.changed, local_report.changed) == (1, 1)
    assert ray_report.chunks_written == local_report.chunks_written
    assert ray_report.tokens_embedded == local_report.tokens_embedded
    assert 0 < ray_report.chunks_written < len(_committed_ids(by_ray)[str(edited)]) // 2
    ray_rows, local_rows = _committed_rows(by_ray), _committed_rows(in_process)
    assert set(ray_rows) == set(local_rows)
    for chunk_id, row in local_rows.items():
        assert {c: ray_rows[chunk_id][c] for c in ROW_COLUMNS} == {c: row[c] for c in ROW_COLUMNS}
        assert np.allclose(ray_rows[chunk_id]["vector"], row["vector"], atol=1e-5)


def _committed_rows(session: Raggity) -> dict[str, dict[str, Any]]:
    location = session.config.index_location
    index = open_committed(
        S3Objects(location), location.child("lancedb", "chunks.lance"), dict(location.storage_options)
    )
    return _rows(index.dataset.to_table(columns=[*ROW_COLUMNS, "vector"]))


def test_rag_ingest_engine_ray_on_the_command_line_starts_its_own_ray_quietly(
    s3: S3Server, folder: Path, local_index: LocalIndex, tmp_path: Path
) -> None:
    """No --ray-address and no $RAY_ADDRESS: a Ray of the ingest's own on this machine (its workers
    inherit this environment's credentials); raggity's progress bar, no Ray output."""
    config = write_config(
        tmp_path,
        index={"path": s3.prefix(), "storage": s3.storage_options},
        ingest={"chunk_tokens": CHUNKING.chunk_tokens, "parent_tokens": CHUNKING.parent_tokens},
    )
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    done = rag("--config", str(config), "ingest", str(folder), "--engine", "ray", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    expected = load_manifest(local_index.layout.manifest).sources
    assert f"{len(expected)} added" in done.stdout
    assert "chunks · " in done.stdout  # the progress bar
    assert [line for line in done.stderr.splitlines() if line.strip()] == []  # skipped files: stdout
    session = Raggity(load_config(config))
    assert _committed_ids(session) == {s: e.chunk_ids for s, e in expected.items()}


def test_a_failed_ray_ingest_is_one_line_without_the_workers_tracebacks() -> None:
    location = IndexLocation("s3://bucket/index", {"endpoint": "http://127.0.0.1:9"})
    worker = RuntimeError(
        "ray.exceptions.RayTaskError(ValueError): ray::Write() (pid=12, ip=127.0.0.1)\n"
        '  File "lance/dataset.py", line 3, in write\n'
        "OSError: Generic S3 error: error sending request for url (http://127.0.0.1:9/bucket/x)"
    )
    failure = ObjectStoreIndex(location).failure
    assert "the object store is unreachable" in str(ray_failure(worker, failure))
    other = RuntimeError(
        '\nray.exceptions.RayTaskError(KeyError): ray::EmbedChunks() token=abcd1234secret\n  File "x.py"'
    )
    message = ray_failure(other, failure).message
    assert (
        message
        == "the Ray ingest failed: ray.exceptions.RayTaskError(KeyError): ray::EmbedChunks() token=***"
    )
