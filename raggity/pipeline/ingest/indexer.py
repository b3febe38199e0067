"""The ingest room's one entry: bring an index in step with folders, or with in-memory documents,
from (config, models).

Discover, read, chunk, embed, write LanceDB + Tantivy, commit the manifest (run.py orchestrates one
run; sync.py brings the stores in step), then update the entity graph when it is on. A new ingest
engine plugs in here, beside IngestRun. It imports nothing from the search or answer rooms: an
import-linter contract says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from raggity.config.schema import Config
from raggity.core.errors import ConfigError, RaggityError
from raggity.core.types import TextDocument
from raggity.ingest.chunker import ChunkingSettings
from raggity.pipeline.ingest.graph_build import GraphBuildSettings, GraphProgress
from raggity.pipeline.ingest.run import GraphUpdate, IngestRequest, IngestRun
from raggity.pipeline.ingest.sources import text_source
from raggity.pipeline.ingest.sync import IngestProgress, IngestReport
from raggity.pipeline.models import Models
from raggity.store.ingest_lock import IngestLock
from raggity.store.layout import IndexLayout


def chunking_settings(config: Config) -> ChunkingSettings:
    cfg = config.ingest
    return ChunkingSettings(
        cfg.chunk_tokens, max(cfg.parent_tokens, cfg.chunk_tokens), config.retrieval.bm25_tokenizer
    )


def graph_settings(config: Config) -> GraphBuildSettings:
    return GraphBuildSettings(max_tokens=min(config.generation.max_tokens, 256))


class Indexer:
    def __init__(self, config: Config, models: Models, *, warn: Callable[[str], None]) -> None:
        self._config = config
        self._models = models
        self._warn = warn
        self._layout = IndexLayout(config.index_dir)

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
        return GraphUpdate(lambda: self._models.generator, graph_settings(self._config))

    def ingest_run(self) -> IngestRun:
        """The orchestrator of one ingest over this index, with these models (tests drive its
        `index_sources` directly, with sources of their own)."""
        return IngestRun(
            self._layout,
            self._config.ingest,
            chunking_settings(self._config),
            embedder=self._models.embedder,
            tokenizer=self._models.tokenizer,
            graph=self.graph_update() if self._config.retrieval.graph else None,
            warn=self._warn,
        )

    def ingest(
        self,
        request: IngestRequest,
        *,
        progress: IngestProgress | None = None,
        graph_progress: GraphProgress | None = None,
    ) -> IngestReport:
        """Indexes the request's folders and files (see run.py: lock, discovery, carry-over); into an
        index on object storage through remote_run.py, in-process or on Ray."""
        engine = request.engine or self._config.ingest.engine
        location = self._config.index_location
        if location.remote:
            from raggity.pipeline.ingest.remote_run import remote_ingest  # noqa: PLC0415 - a local index never loads boto3

            return remote_ingest(
                request,
                location,
                config=self._config,
                models=self._models,
                chunking=chunking_settings(self._config),
                engine=engine,
                progress=progress,
                warn=self._warn,
            )
        if engine == "ray":
            raise ConfigError(
                f"{location.uri}: the Ray engine writes to an index on object storage only",
                "set [index] path to an s3:// URI, or ingest this local index with --engine local",
            )
        return self.ingest_run().run(request, progress=progress, graph_progress=graph_progress)

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
        with IngestLock(self._layout.lock, wait_seconds=wait_seconds):
            return self.ingest_run().index_sources(
                [text_source(d) for d in documents], lambda _: True, rebuild=rebuild, progress=progress
            )
