"""The ingest room's one entry: bring an index in step with folders, or with in-memory documents,
from (config, models). It picks the store (store/index_seam.py) and the engine (in this process, or
on Ray) and nothing else; run.py orchestrates one run (docs/architecture.md, "The path of an
ingest"). It imports nothing from the search or answer rooms: an import-linter contract says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from raggity.config.schema import Config
from raggity.core.errors import ConfigError, RaggityError
from raggity.core.types import TextDocument
from raggity.documents.chunker import ChunkingSettings
from raggity.pipeline.graph.build import GraphBuildSettings, GraphProgress, GraphUpdate
from raggity.pipeline.ingest.in_process import InProcessRows
from raggity.pipeline.ingest.report import IngestProgress, IngestReport
from raggity.pipeline.ingest.run import IngestRequest, IngestRun
from raggity.pipeline.ingest.sources import text_source
from raggity.pipeline.ingest.sync import RowWriter
from raggity.pipeline.model_loading import Models
from raggity.store.index_seam import IndexStore, cleanup_after_ingest
from raggity.store.layout import IndexLayout
from raggity.store.local_index import LocalIndex


def chunking_settings(config: Config) -> ChunkingSettings:
    cfg = config.ingest
    return ChunkingSettings(
        cfg.chunk_tokens, max(cfg.parent_tokens, cfg.chunk_tokens), config.retrieval.bm25_tokenizer
    )


class Indexer:
    def __init__(self, config: Config, models: Models, *, warn: Callable[[str], None]) -> None:
        self._config = config
        self._models = models
        self._warn = warn
        self._opened: IndexStore | None = None

    @property
    def _store(self) -> IndexStore:
        # On first use: a config whose [index] path is refused fails the command that writes it.
        if self._opened is None:
            self._opened = index_store(self._config)
        return self._opened

    def roots(self, paths: Sequence[Path] = ()) -> tuple[Path, ...]:
        """`paths` made absolute, or the config's [ingest] paths when none are given."""
        roots = [Path(p).expanduser().resolve() for p in paths] or [
            self._config.resolve(p) for p in self._config.ingest.paths
        ]
        if not roots:
            raise RaggityError(
                "nothing to ingest: no PATH given", "pass a folder, or set [ingest] paths in raggity.toml"
            )
        return tuple(roots)

    def graph_update(self) -> GraphUpdate:
        """The entity-graph update; its generator is loaded only if some chunk needs extracting."""
        settings = GraphBuildSettings(max_tokens=min(self._config.generation.max_tokens, 256))
        return GraphUpdate(lambda: self._models.generator, settings)

    def ingest_run(self, engine: str = "local", ray_address: str | None = None) -> IngestRun:
        """The orchestrator of one ingest over this index, with these models and this engine (tests
        drive its `index_sources` directly, with sources of their own)."""
        return IngestRun(
            self._store,
            self._config.ingest,
            chunking_settings(self._config),
            embedder=self._models.embedder,
            rows=self._rows(engine, ray_address),
            index_dir=self._config.index_dir,
            graph=self.graph_update() if self._config.retrieval.graph else None,
            root=self._config.source_root,
            warn=self._warn,
        )

    def _rows(self, engine: str, ray_address: str | None) -> RowWriter:
        if engine == "ray":
            if self._store.layout is not None:
                raise ConfigError(
                    f"{self._store.uri}: the Ray engine writes to an index on object storage only",
                    "set [index] path to an s3:// URI, or ingest this local index with --engine local",
                )
            from raggity.pipeline.ingest.ray_rows import RayRows  # noqa: PLC0415 - Ray loads only for its engine

            return RayRows(
                self._config,
                chunking_settings(self._config),
                address=ray_address or self._config.ingest.ray_address or None,
                dim=self._models.embedder.dim,
                failure=self._store.failure,
            )
        return InProcessRows(self._models.embedder, self._models.tokenizer, chunking_settings(self._config))

    def ingest(
        self,
        request: IngestRequest,
        *,
        progress: IngestProgress | None = None,
        graph_progress: GraphProgress | None = None,
    ) -> IngestReport:
        """Indexes the request's folders and files (see run.py: lock, discovery, carry-over), into an
        index folder or an index on object storage, in-process or on Ray."""
        engine = request.engine or self._config.ingest.engine
        run = self.ingest_run(engine, request.ray_address)
        return run.run(request, progress=progress, graph_progress=graph_progress)

    def index_documents(
        self,
        documents: Sequence[TextDocument],
        *,
        rebuild: bool = False,
        wait_seconds: float = 0.0,
        progress: IngestProgress | None = None,
    ) -> IngestReport:
        """Makes the index hold exactly `documents` (by name): new and changed ones are embedded,
        unchanged ones kept (all re-embedded with `rebuild`), and every other source removed. Takes
        the writer lock, as an ingest does."""
        with self._store.lock(wait_seconds):
            return self.ingest_run().index_sources(
                [text_source(d) for d in documents], lambda _: True, rebuild=rebuild, progress=progress
            )


def index_store(config: Config) -> IndexStore:
    """The store the config's [index] path names: a folder, or a prefix on object storage."""
    location = config.index_location
    if location.on_object_store:
        from raggity.store.object_index import ObjectStoreIndex  # noqa: PLC0415 - a local index never loads boto3

        return ObjectStoreIndex(
            location,
            cleanup=cleanup_after_ingest(config.index),
            vector_index_min_rows=config.index.vector_index_min_rows,
        )
    return LocalIndex(
        IndexLayout(config.index_dir),
        version_grace=cleanup_after_ingest(config.index),
        vector_index_min_rows=config.index.vector_index_min_rows,
    )
