"""The ingest room's one entry: bring an index in step with folders, or with in-memory documents,
from (config, models). It picks the store (store/index_seam.py) and the engine (in this process, or
on Ray), and runs one ingest: the writer lock, the sources (run.py), the sync (sync.py), the graph
(docs/architecture.md, "The path of an ingest"). It imports nothing from the search or answer
rooms: an import-linter contract says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from raggity.config.schema import Config
from raggity.core.errors import ConfigError, IndexStateError, RaggityError
from raggity.core.types import TextDocument
from raggity.documents.chunker import ChunkingSettings
from raggity.pipeline.graph.build import GraphBuildSettings, GraphProgress, GraphUpdate
from raggity.pipeline.ingest.in_process import InProcessRows
from raggity.pipeline.ingest.plan import index_fingerprint, rebuilds
from raggity.pipeline.ingest.report import IngestProgress, IngestReport, finished
from raggity.pipeline.ingest.run import IngestRequest, carried_over, discovered
from raggity.pipeline.ingest.sources import SourceFile, SourceNames, in_roots, text_source
from raggity.pipeline.ingest.sync import IndexSync, RowWriter
from raggity.pipeline.model_loading import Models
from raggity.store.index_seam import IndexStore, Manifest, cleanup_after_ingest
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

    def index_sources(
        self,
        sources: Sequence[SourceFile],
        in_scope: Callable[[str], bool],
        *,
        rebuild: bool = False,
        progress: IngestProgress | None = None,
        rows: RowWriter | None = None,
    ) -> IngestReport:
        """Brings the index in step with `sources` (tests give sources of their own), its rows made
        by `rows` (default: in this process); the caller holds the store's lock."""
        sync = IndexSync(
            self._store,
            embedder=self._models.embedder,
            chunking=chunking_settings(self._config),
            rows=rows or self._rows("local", None),
            progress=progress,
        )
        return sync.run(sources, in_scope, rebuild=rebuild)

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
        """Indexes the request's folders and files, into an index folder or an index on object
        storage, in-process or on Ray."""
        rows = self._rows(request.engine or self._config.ingest.engine, request.ray_address)
        indexed = tuple(self._committed().sources)
        names = SourceNames.of(self._config.source_root, indexed, rebuild=request.rebuild)
        # The folders this ingest speaks for: deletion and carry-over are scoped by them.
        in_scope = in_roots(list(request.roots), names)
        present = [root for root in request.roots if root.exists()]
        for root in (root for root in request.roots if not root.exists()):
            # A folder that was indexed and has since been deleted is ingested as empty, which
            # removes its files; before, they stayed searchable for good (short of --rebuild).
            if not any(map(in_roots([root], names), indexed)):
                raise RaggityError(f"{root}: no such file or folder", "check the path")
        settings, index_dir = self._config.ingest, self._config.index_dir
        with self._store.lock(request.wait_seconds):
            sources, early, found = discovered(present, names, settings, index_dir=index_dir)
            manifest = self._committed()  # damaged: nothing trustworthy to carry over
            current = index_fingerprint(self._models.embedder.identity, chunking_settings(self._config))
            if rebuilds(request.rebuild, manifest.fingerprint, current):
                carried, dropped = carried_over(manifest, in_scope, names, settings, index_dir=index_dir)
                sources += carried
                early += dropped
            for skipped in early:
                if progress is not None:
                    progress.warn(skipped.source, skipped.reason)
            report = self.index_sources(
                sources, in_scope, rebuild=request.rebuild, progress=progress, rows=rows
            )
            if self._config.retrieval.graph:
                self._update_graph(graph_progress)
        return finished(report, early, found.excluded, strict=request.strict)

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
            return self.index_sources(
                [text_source(d) for d in documents], lambda _: True, rebuild=rebuild, progress=progress
            )

    def _update_graph(self, progress: GraphProgress | None) -> None:
        """A failed graph update leaves the committed index as it is and says how to retry."""
        layout = self._store.layout
        if layout is None:
            self._warn("the entity graph is not built for an index on object storage yet")
            return
        try:
            self.graph_update().run(layout, progress)
        except RaggityError as exc:
            self._warn(f"entity graph not updated: {exc}; run `rag graph-build` to retry")

    def _committed(self) -> Manifest:
        try:
            return self._store.committed()
        except IndexStateError:
            return Manifest()  # no index yet, or a damaged one: nothing known to be indexed


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
