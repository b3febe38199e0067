"""The Ray ingest engine's stages (wiring: docs/scaling.md). Each is a Ray Data operator:

  paths --flat_map(ChunkFiles)--> chunk rows --map_batches(EmbedChunks, actor pool)--> rows + vectors
        --lance_ray.write_lance--> one Lance commit on the chunk table

ChunkFiles reads with pipeline/ingest/reading.py, so a chunk gets the id and a file the skip reason
the in-process engine gives it; a chunk the index already holds goes back to the driver, which keeps
its row (SyncRun.keep). EmbedChunks holds one ONNX embedder per actor. What the driver needs besides
the rows (each file's hash, chunk ids and kept chunks, skips, progress) goes to a small Tally actor.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from raggity.config.schema import EmbeddingConfig, IngestConfig
from raggity.core.extras import require
from raggity.core.types import Chunk
from raggity.documents.chunker import ChunkingSettings
from raggity.models.registry import EmbedderFiles
from raggity.pipeline.ingest.reading import EMBED_SLICE, open_source, read_chunks
from raggity.pipeline.ingest.report import Skipped
from raggity.pipeline.model_loading import onnx_embedder
from raggity.store.chunk_table import chunk_row, chunk_schema

# Rows per embedding call in an actor: the in-process engine's slice.
EMBED_BATCH = EMBED_SLICE


@dataclass(frozen=True)
class EmbedderSpec:
    """How a worker loads the embedder: its files on a file system every worker sees, and its settings."""

    files: EmbedderFiles
    embedding: EmbeddingConfig


@dataclass(frozen=True)
class ChunkerSpec:
    """How a worker reads and chunks a file: the tokenizer's path, and the driver's settings."""

    tokenizer: str
    chunking: ChunkingSettings = field(default_factory=ChunkingSettings)
    ingest: IngestConfig = field(default_factory=IngestConfig)


@dataclass(frozen=True)
class SourceResult:
    """What the manifest records for a file that was read (its hash and chunk ids), and its chunks
    that the index already holds (not embedded: the driver keeps their rows)."""

    source: str
    sha256: str
    chunk_ids: tuple[str, ...]
    kept: tuple[Chunk, ...] = ()


class Tally:
    """A Ray actor the stages report to; the driver reads it for the manifest, skips and progress."""

    def __init__(self) -> None:
        self.sources: list[SourceResult] = []
        self.skipped: list[tuple[str, str]] = []
        self.chunks = 0
        self.tokens = 0

    def read(self, result: SourceResult) -> None:
        self.sources.append(result)

    def skip(self, source: str, reason: str) -> None:
        self.skipped.append((source, reason))

    def embedded(self, chunks: int, tokens: int) -> None:
        self.chunks += chunks
        self.tokens += tokens

    def report(self) -> tuple[Any, ...]:
        """The files read and skipped, and the chunks and tokens embedded, since the last report (a
        poll fetches only the news)."""
        news = self.sources, self.skipped, self.chunks, self.tokens
        self.sources, self.skipped, self.chunks, self.tokens = [], [], 0, 0
        return news


class ChunkFiles:
    """flat_map stage: a path row in, its chunk rows out. The tokenizer loads once per worker."""

    def __init__(self, spec: ChunkerSpec, tally: Any) -> None:
        from raggity.inference.tokenizer import HFTokenizer  # noqa: PLC0415 - loads in the worker

        self._tokenizer = HFTokenizer(Path(spec.tokenizer))
        self._spec = spec
        self._tally = tally

    def __call__(self, row: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """`row`: a file's source name, the real path discovery checked (opened with no link
        followed, as the in-process engine does), and the ids of its chunks the index holds."""
        real = str(row["real"])
        item = open_source(Path(real), name=str(row["source"]), real=real, settings=self._spec.ingest)
        if isinstance(item, Skipped):
            self._tally.skip.remote(item.source, item.reason)
            return
        chunks, settled = read_chunks(item, self._tokenizer, self._spec.chunking)
        if settled.digest is None:
            self._tally.skip.remote(item.source, settled.problem or "")
            return
        stored = set(row.get("stored") or ())
        kept = tuple(c for c in chunks if c.id in stored)
        self._tally.read.remote(SourceResult(item.source, settled.digest, tuple(settled.ids), kept))
        for chunk in chunks:
            if chunk.id not in stored:
                yield chunk_row(chunk)


class EmbedChunks:
    """map_batches stage in an actor pool: adds the `vector` column. One ONNX model per actor."""

    def __init__(self, spec: EmbedderSpec, tally: Any) -> None:
        self._embedder = onnx_embedder(spec.files, spec.embedding)
        self._tally = tally

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa  # noqa: PLC0415 - loads in the worker

        texts = batch.column("search_text").to_pylist()
        vectors = np.ascontiguousarray(self._embedder.embed(texts), dtype=np.float32)
        column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), self._embedder.dim)
        self._tally.embedded.remote(len(texts), int(pa.compute.sum(batch.column("n_tokens")).as_py() or 0))
        return batch.append_column("vector", column)


@dataclass(frozen=True)
class RayIngestPlan:
    """One Ray ingest of `paths` (each file's source name, the real path it is read by, and the ids
    of its chunks the index holds) into the chunk table at `table_uri`."""

    paths: tuple[tuple[str, str, tuple[str, ...]], ...]
    chunker: ChunkerSpec
    embedder: EmbedderSpec
    dim: int
    chunk_workers: int = 1
    embed_workers: int = 1
    # CPUs Ray reserves per chunking actor, per embedding actor (match EmbedderSpec.threads) and per
    # write task. On a small cluster the sum must leave room for the writers, or the pipeline stalls.
    chunk_cpus: float = 1.0
    embed_cpus: float = 1.0
    write_cpus: float = 1.0


def new_tally() -> Any:
    ray = require("ray")
    return ray.remote(num_cpus=0)(Tally).remote()


def write_chunks(
    plan: RayIngestPlan, tally: Any, table_uri: str, storage_options: Mapping[str, str], *, mode: str
) -> None:
    """Runs the stages (read and chunk the plan's paths in an actor, embed in an actor pool) and
    writes their rows to the Lance table in one commit (`mode`: "create", "append" or "overwrite"):
    lance_ray writes fragments from the workers; the driver commits them."""
    ray, lance_ray = require("ray"), require("lance_ray")
    paths = ray.data.from_items(
        [{"source": source, "real": real, "stored": list(stored)} for source, real, stored in plan.paths]
    )
    chunked = paths.flat_map(
        ChunkFiles,
        fn_constructor_kwargs={"spec": plan.chunker, "tally": tally},
        compute=ray.data.ActorPoolStrategy(size=plan.chunk_workers),
        num_cpus=plan.chunk_cpus,
        # A failed ingest is run again by the user (the next run converges); an actor restarted by Ray
        # would also need its constructor arguments kept in the object store (Ray warns about that).
        max_restarts=0,
    )
    embedded = chunked.map_batches(
        EmbedChunks,
        fn_constructor_kwargs={"spec": plan.embedder, "tally": tally},
        compute=ray.data.ActorPoolStrategy(size=plan.embed_workers),
        num_cpus=plan.embed_cpus,
        max_restarts=0,
        batch_size=EMBED_BATCH,
        batch_format="pyarrow",
    )
    lance_ray.write_lance(
        embedded,
        table_uri,
        schema=chunk_schema(plan.dim, search_text=True),
        mode=mode,
        storage_options=dict(storage_options),
        ray_remote_args={"num_cpus": plan.write_cpus},
    )


def tally_report(tally: Any) -> tuple[list[SourceResult], list[tuple[str, str]], int, int]:
    ray = require("ray")
    sources, skipped, chunks, tokens = ray.get(tally.report.remote())
    return sorted(sources, key=lambda s: s.source), sorted(skipped), chunks, tokens
