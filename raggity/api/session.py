"""The Python API: `Raggity(config)` with ingest(), search() and ask()."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from raggity.api.status import rebuild_notice
from raggity.config.schema import Config
from raggity.core.errors import IndexStateError, RaggityError
from raggity.core.protocols import Embedder, Scorer, Tokenizer, Vectors
from raggity.core.trace import TraceRecorder
from raggity.core.types import Answer, Candidate, Query, StageTrace
from raggity.ingest.chunker import ChunkingSettings
from raggity.models.registry import check_generator_name
from raggity.pipeline.answer_cache import AnswerCache
from raggity.pipeline.answerability import thresholds_for
from raggity.pipeline.ask import AskSettings, answer_from_candidates, select_candidates
from raggity.pipeline.generation import TextGenerator
from raggity.pipeline.graph_build import GraphBuildSettings, GraphProgress
from raggity.pipeline.graph_source import GraphSource
from raggity.pipeline.ingest import IngestProgress, IngestReport
from raggity.pipeline.models import (
    embedder_identity,
    generator_identity,
    load_embedder,
    load_generator,
    load_scorer,
    load_tokenizer,
)
from raggity.pipeline.query_plan import TransformOptions, resolve_options
from raggity.pipeline.retrieval import request_retriever
from raggity.pipeline.search import HybridRetriever, IndexSnapshot, Mode, QueryPlan, SearchOptions
from raggity.pipeline.transforms import Transforms, TransformSettings
from raggity.store.cache_store import CacheStore
from raggity.store.layout import IndexLayout
from raggity.store.manifest import load_manifest

if TYPE_CHECKING:
    from raggity.pipeline.ingest_run import IngestRun

Warn = Callable[[str], None]


@dataclass(frozen=True)
class SearchResult:
    query: str
    candidates: tuple[Candidate, ...]
    trace: tuple[StageTrace, ...]


def with_generation_model(config: Config, model: str) -> Config:
    """The config with another generation model by name (`rag ask --model`, `rag eval --model`); a
    configured model_path would override the name, so it is cleared. An unknown name is an error here,
    before any retrieval: a question that abstains never loads the model, and exited 0 with a typo."""
    check_generator_name(model)
    return replace(config, generation=replace(config.generation, model=model, model_path=""))


def _ignore(_: str) -> None:
    pass


class Raggity:
    """One knowledge base: a configuration, its index folder, and the models it uses.

    Models are collaborators passed at construction, the way httpx clients take `transport=`:
    `embedder`, `tokenizer` (the embedder's, which chunking counts with), `scorer` (cross-encoder)
    and `generator` default to the real models the config names, each loaded on first use, so
    `rag search` never loads the generator. Tests pass doubles here instead of patching.
    `warn` receives one-line warnings (a missing reranker, a missing entity graph).
    """

    def __init__(
        self,
        config: Config | None = None,
        *,
        embedder: Embedder | None = None,
        tokenizer: Tokenizer | None = None,
        scorer: Scorer | None = None,
        generator: TextGenerator | None = None,
        warn: Warn = _ignore,
    ) -> None:
        self.config = config or Config()
        self.layout = IndexLayout(self.config.index_dir)
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._scorer = scorer
        self._scorer_resolved = scorer is not None
        self._generator = generator
        self._warn = warn
        self._snapshot: IndexSnapshot | None = None
        self._graph: GraphSource | None = None

    def with_generator(self, generator: TextGenerator) -> Raggity:
        """A session on the same index, with the same models and warnings, that answers through
        `generator` (a conversation wraps the model to put its history into each answer's prompt)."""
        return Raggity(
            self.config,
            embedder=self._embedder,
            tokenizer=self._tokenizer,
            scorer=self._scorer if self._scorer_resolved else None,
            generator=generator,
            warn=self._warn,
        )

    # -- models, each loaded on first use unless given ------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = load_embedder(self.config)
        return self._embedder

    def _embed(self, texts: Sequence[str]) -> Vectors:
        """Embeds with the embedder, loading it only when a query is first embedded."""
        return self.embedder.embed(texts)

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self.config)
        return self._tokenizer

    @property
    def scorer(self) -> Scorer | None:
        """The cross-encoder, or None (with one warning) when it is off or not installed."""
        if not self._scorer_resolved:
            self._scorer = load_scorer(self.config, self._warn)
            self._scorer_resolved = True
        return self._scorer

    @property
    def generator(self) -> TextGenerator:
        if self._generator is None:
            self._generator = load_generator(self.config)
        return self._generator

    @property
    def generator_identity(self) -> str:
        """The generator's identity without loading it (cache keys must not cost a model load)."""
        if self._generator is not None:
            return self._generator.identity
        return generator_identity(self.config)

    def cache_store(self, use_cache: bool | None = None) -> CacheStore | None:
        """The answer/transform cache under the index folder, or None when caching is off."""
        on = self.config.generation.cache if use_cache is None else use_cache
        return CacheStore(self.layout.cache) if on else None

    def transforms(self, use_cache: bool | None = None) -> Transforms:
        g = self.config.generation
        return Transforms(
            lambda: self.generator,
            identity=self.generator_identity,
            settings=TransformSettings(expand_n=self.config.retrieval.expand_n, temperature=g.temperature),
            cache=self.cache_store(use_cache),
        )

    def chunking(self) -> ChunkingSettings:
        cfg = self.config.ingest
        return ChunkingSettings(
            cfg.chunk_tokens, max(cfg.parent_tokens, cfg.chunk_tokens), self.config.retrieval.bm25_tokenizer
        )

    # -- ingest --------------------------------------------------------------------------------
    def ingest(
        self,
        paths: Sequence[Path] = (),
        *,
        rebuild: bool = False,
        strict: bool = False,
        wait_seconds: float = 0.0,
        progress: IngestProgress | None = None,
        graph_progress: GraphProgress | None = None,
    ) -> IngestReport:
        """Indexes `paths` (default: the config's [ingest] paths); see raggity.pipeline.ingest_run."""
        from raggity.pipeline.ingest_run import IngestRequest  # noqa: PLC0415 - search must not pay for ingest's imports

        request = IngestRequest(self.ingest_roots(paths), rebuild, strict, wait_seconds)
        try:
            return self.ingest_run().run(request, progress=progress, graph_progress=graph_progress)
        finally:
            self._snapshot = None

    def ingest_roots(self, paths: Sequence[Path] = ()) -> tuple[Path, ...]:
        """`paths` made absolute, or the config's [ingest] paths when none are given."""
        roots = [Path(p).expanduser().resolve() for p in paths] or [
            self.config.resolve(p) for p in self.config.ingest.paths
        ]
        if not roots:
            raise RaggityError(
                "nothing to ingest: no PATH given", "pass a folder, or set [ingest] paths in raggity.toml"
            )
        return tuple(roots)

    def ingest_run(self) -> IngestRun:
        """The ingest orchestrator for this index, with this session's models."""
        from raggity.pipeline.ingest_run import GraphUpdate, IngestRun  # noqa: PLC0415 - search must not pay for ingest's imports

        graph = (
            GraphUpdate(lambda: self.generator, self.graph_settings())
            if self.config.retrieval.graph
            else None
        )
        return IngestRun(
            self.layout,
            self.config.ingest,
            self.chunking(),
            embedder=self.embedder,
            tokenizer=self.tokenizer,
            graph=graph,
            warn=self._warn,
        )

    def graph_settings(self) -> GraphBuildSettings:
        return GraphBuildSettings(max_tokens=min(self.config.generation.max_tokens, 256))

    # -- query ---------------------------------------------------------------------------------
    def _open_snapshot(self) -> IndexSnapshot:
        if self._snapshot is None:
            self.layout.require()
            snapshot = IndexSnapshot(self.layout)
            self._check_fingerprint()
            self._snapshot = snapshot
            if notice := rebuild_notice(self.layout):
                self._warn(notice)
        return self._snapshot

    def _check_fingerprint(self) -> None:
        """Query vectors from one embedder are meaningless against an index built by another."""
        built = load_manifest(self.layout.manifest).fingerprint
        configured = embedder_identity(self.config)
        if built is not None and built.embedder != configured:
            raise IndexStateError(
                f"{self.layout.root}: index was built with embedder {built.embedder}, "
                f"but the config now uses {configured}",
                "run `rag ingest --rebuild` to re-embed with the configured model",
            )

    def _graph_source(self) -> GraphSource:
        if self._graph is None:
            self._graph = GraphSource(
                self.layout,
                self._embed,
                hops=self.config.retrieval.graph_hops,
                warn=self._warn,
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
        files whose path matches it (see raggity.pipeline.search.path_matches)."""
        snapshot = self._open_snapshot()
        cfg = self.config.retrieval
        if not cfg.hybrid and mode == "hybrid":
            mode = "dense"
        options = SearchOptions(candidates or cfg.candidates, cfg.rrf_k, mode, cfg.dedup_cosine, path_glob)
        scorer = self.scorer if rerank else None
        graph = self._graph_source().leaf if cfg.graph else None

        def hybrid(plan: QueryPlan) -> HybridRetriever:
            return HybridRetriever(snapshot, options, plan=plan, trace=trace, scorer=scorer, graph=graph)

        retriever = request_retriever(
            hybrid,
            transforms or TransformOptions(),
            embed=None if mode == "bm25" else self._embed,
            transforms=lambda: self.transforms(use_cache),
            trace=trace,
            warn=self._warn,
        )
        return retriever.retrieve(Query(question))

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
        """The best `k` chunks for `query` (default [retrieval] top_k); no language model is loaded."""
        if not query.strip():
            raise RaggityError(
                "the query is empty", 'search for something, e.g. rag search "install on linux"'
            )
        trace = TraceRecorder()
        found = self.retrieve(
            query, trace, mode=mode, candidates=candidates, rerank=rerank, path_glob=path_glob
        )
        settings = replace(self._ask_settings(), top_k=k or self.config.retrieval.top_k)
        return SearchResult(query, tuple(select_candidates(found, settings)), trace.stages)

    def ask(
        self,
        question: str,
        *,
        on_token: Callable[[str], None] | None = None,
        hyde: bool | None = None,
        step_back: bool | None = None,
        expand: bool | None = None,
        decompose: bool = False,
        use_cache: bool | None = None,
        top_k: int | None = None,
        path_glob: str | None = None,
    ) -> Answer:
        """hyde/step_back/expand/use_cache/top_k: None means as configured; `path_glob` keeps only
        files whose path matches it."""
        if not question.strip():
            raise RaggityError("the question is empty", 'ask something, e.g. rag ask "how do I install it?"')
        trace = TraceRecorder()
        options = self.transform_options(hyde=hyde, step_back=step_back, expand=expand, decompose=decompose)
        candidates = self.retrieve(
            question, trace, transforms=options, use_cache=use_cache, path_glob=path_glob
        )
        return self.answer(question, candidates, trace, on_token=on_token, use_cache=use_cache, top_k=top_k)

    def transform_options(
        self,
        *,
        hyde: bool | None = None,
        step_back: bool | None = None,
        expand: bool | None = None,
        decompose: bool = False,
    ) -> TransformOptions:
        """The query transforms for one question: the config's, overridden where not None."""
        r = self.config.retrieval
        return resolve_options(
            TransformOptions(r.hyde, r.step_back, r.expand),
            hyde=hyde,
            step_back=step_back,
            expand=expand,
            decompose=decompose,
        )

    def answer(
        self,
        question: str,
        candidates: Sequence[Candidate],
        trace: TraceRecorder,
        *,
        on_token: Callable[[str], None] | None = None,
        use_cache: bool | None = None,
        top_k: int | None = None,
    ) -> Answer:
        """The answer from already retrieved `candidates`: abstain, or generate and check citations."""
        store = self.cache_store(use_cache)
        settings = self._ask_settings()
        if top_k is not None:
            settings = replace(settings, top_k=top_k)
        return answer_from_candidates(
            question,
            candidates,
            settings=settings,
            table=self._open_snapshot().table,
            generator=lambda: self.generator,
            trace=trace,
            on_token=on_token,
            cache=None
            if store is None
            else AnswerCache(store, self.generator_identity, self.config.generation.seed),
        )

    def _ask_settings(self) -> AskSettings:
        r, g = self.config.retrieval, self.config.generation
        return AskSettings(
            r.top_k,
            r.sufficiency_floor,
            r.relevance_floor,
            r.parent_document,
            g.max_tokens,
            g.source_tokens,
            g.temperature,
            # model_path names a file nobody calibrated, whatever `model` says.
            thresholds_for("" if g.model_path else g.model),
        )
