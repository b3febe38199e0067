"""The search room's one entry: ranked candidates for a question, from (config, models).

Opens the index as of its last commit (refusing one built by another embedder), plans the queries
(query transforms, decomposition), and runs the hybrid retriever with its stages. It imports nothing
from the ingest or answer rooms: an import-linter contract says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from raggity.config.schema import Config
from raggity.core.errors import IndexStateError, RaggityError
from raggity.core.trace import TraceRecorder
from raggity.core.types import Candidate, Query, StageTrace
from raggity.pipeline.model_loading import Models
from raggity.pipeline.search.graph_source import GraphSource
from raggity.pipeline.search.hybrid import HybridRetriever, IndexSnapshot, Mode, QueryPlan, SearchOptions
from raggity.pipeline.search.query_plan import TransformOptions, resolve_options
from raggity.pipeline.search.request import request_retriever
from raggity.pipeline.search.transforms import Transforms, TransformSettings
from raggity.retrieval.selection import select_candidates
from raggity.store.cache_store import CacheStore
from raggity.store.health import require_healthy
from raggity.store.layout import IndexLayout
from raggity.store.manifest import Fingerprint
from raggity.store.object_store_errors import lance_store_error
from raggity.store.rebuild_state import rebuild_notice


def store_failure(exc: BaseException, config: Config) -> RaggityError | None:
    """The one-line error for an object-store failure of a remote index; None otherwise."""
    location = config.index_location
    return lance_store_error(exc, location) if location.on_object_store else None


@dataclass(frozen=True)
class SearchResult:
    query: str
    candidates: tuple[Candidate, ...]
    trace: tuple[StageTrace, ...]


class Searcher:
    """Retrieval over one index. The index is opened on first use and kept; `forget()` drops it
    after this process changed the index (an ingest), so the next search reads the new commit."""

    def __init__(self, config: Config, models: Models, *, warn: Callable[[str], None]) -> None:
        self._config = config
        self._models = models
        self._warn = warn
        self._layout = IndexLayout(config.index_dir)
        self._snapshot: IndexSnapshot | None = None
        self._graph: GraphSource | None = None

    @property
    def snapshot(self) -> IndexSnapshot:
        """The index as of its last commit: a clear error when there is none, or when it was built
        with another embedder (query vectors from one model mean nothing against another's)."""
        if self._snapshot is None:
            location = self._config.index_location
            if location.on_object_store:
                from raggity.pipeline.search.object_snapshot import ObjectIndexSnapshot  # noqa: PLC0415 - a local index never loads boto3

                remote = ObjectIndexSnapshot(location)
                remote.refresh()  # "no index yet" and store errors surface here, before any query
                self._check_fingerprint(remote.fingerprint, location.uri)
                self._snapshot = remote
                return remote
            # The one health check every command and `rag doctor` make (raggity.store.health); the
            # snapshot reads the records (a million chunk ids take about a second), so this does not.
            manifest = require_healthy(self._layout, records=False)
            snapshot = IndexSnapshot(self._layout)
            self._check_fingerprint(manifest.fingerprint, str(self._layout.root))
            self._snapshot = snapshot
            if notice := rebuild_notice(self._layout):
                self._warn(notice)
        return self._snapshot

    def forget(self) -> None:
        self._snapshot = None

    def _check_fingerprint(self, built: Fingerprint | None, where: str) -> None:
        configured = self._models.embedder_identity
        if built is not None and built.embedder != configured:
            raise IndexStateError(
                f"{where}: index was built with embedder {built.embedder}, "
                f"but the config now uses {configured}",
                "run `rag ingest --rebuild` to re-embed with the configured model",
            )

    def cache_store(self, use_cache: bool | None = None) -> CacheStore | None:
        """The transform/answer cache under the index folder, or None when caching is off."""
        on = self._config.generation.cache if use_cache is None else use_cache
        return CacheStore(self._layout.cache) if on else None

    def transforms(self, use_cache: bool | None = None) -> Transforms:
        g = self._config.generation
        return Transforms(
            lambda: self._models.generator,
            identity=self._models.generator_identity,
            settings=TransformSettings(expand_n=self._config.retrieval.expand_n, temperature=g.temperature),
            cache=self.cache_store(use_cache),
        )

    def transform_options(
        self,
        *,
        hyde: bool | None = None,
        step_back: bool | None = None,
        expand: bool | None = None,
        decompose: bool = False,
    ) -> TransformOptions:
        """The query transforms for one question: the config's, overridden where not None."""
        r = self._config.retrieval
        return resolve_options(
            TransformOptions(r.hyde, r.step_back, r.expand),
            hyde=hyde,
            step_back=step_back,
            expand=expand,
            decompose=decompose,
        )

    def _graph_source(self) -> GraphSource:
        if self._graph is None:
            self._graph = GraphSource(
                self._layout, self._models.embed, hops=self._config.retrieval.graph_hops, warn=self._warn
            )
        return self._graph

    def retrieve(
        self,
        question: str,
        trace: TraceRecorder,
        *,
        mode: Mode = "hybrid",
        candidates: int | None = None,
        rerank: bool = True,
        transforms: TransformOptions | None = None,
        use_cache: bool | None = None,
        path_glob: str | None = None,
    ) -> list[Candidate]:
        """Ranked candidates for `question`, every stage recorded in `trace`; `path_glob` keeps only
        files whose path matches it (see raggity.pipeline.search.hybrid.path_matches)."""
        snapshot = self.snapshot
        cfg = self._config.retrieval
        if not cfg.hybrid and mode == "hybrid":
            mode = "dense"
        options = SearchOptions(candidates or cfg.candidates, cfg.rrf_k, mode, cfg.dedup_cosine, path_glob)
        scorer = self._models.scorer if rerank else None
        graph = self._graph_source().leaf if cfg.graph else None

        def hybrid(plan: QueryPlan) -> HybridRetriever:
            return HybridRetriever(snapshot, options, plan=plan, trace=trace, scorer=scorer, graph=graph)

        retriever = request_retriever(
            hybrid,
            transforms or TransformOptions(),
            embed=None if mode == "bm25" else self._models.embed,
            transforms=lambda: self.transforms(use_cache),
            trace=trace,
            warn=self._warn,
        )
        try:
            return retriever.retrieve(Query(question))
        except (ValueError, OSError, RuntimeError) as exc:
            # An index on object storage is read during the query too: a store failure is one line.
            mapped = store_failure(exc, self._config)
            if mapped is None:
                raise
            raise mapped from None

    def search(
        self,
        query: str,
        *,
        k: int | None = None,
        mode: Mode = "hybrid",
        candidates: int | None = None,
        rerank: bool = True,
        path_glob: str | None = None,
    ) -> SearchResult:
        """The best `k` chunks for `query` (default [retrieval] top_k), chosen as an answer's sources
        are (relevance_floor applies); no language model is loaded."""
        if not query.strip():
            raise RaggityError(
                "the query is empty", 'search for something, e.g. rag search "install on linux"'
            )
        trace = TraceRecorder()
        found = self.retrieve(
            query, trace, mode=mode, candidates=candidates, rerank=rerank, path_glob=path_glob
        )
        r = self._config.retrieval
        chosen = select_candidates(found, k or r.top_k, r.relevance_floor)
        return SearchResult(query, tuple(chosen), trace.stages)
