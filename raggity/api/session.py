"""The Python API: one object per configuration, loading each model only when first needed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from raggity.config.schema import Config
from raggity.core.errors import IndexStateError, IngestIncompleteError, RaggityError
from raggity.core.protocols import Embedder, Scorer, Tokenizer
from raggity.core.trace import TraceRecorder
from raggity.core.types import Answer, Candidate, Query, StageTrace
from raggity.ingest.chunker import ChunkingSettings
from raggity.models.registry import (
    describe_reranker_fix,
    resolve_embedder,
    resolve_generator,
    resolve_reranker,
)
from raggity.pipeline.answer_cache import AnswerCache, CacheStore
from raggity.pipeline.ask import AskSettings, answer_from_candidates
from raggity.pipeline.generation import TextGenerator
from raggity.pipeline.graph_build import GraphProgress
from raggity.pipeline.ingest import IndexSync, IngestProgress, IngestReport, Skipped, SourceFile
from raggity.pipeline.query_plan import TransformOptions, resolve_options, retrieve_planned
from raggity.pipeline.search import ExtraCandidates, HybridSearch, IndexSnapshot, Mode, SearchOptions
from raggity.pipeline.transforms import Transforms, TransformSettings
from raggity.store.ingest_lock import IngestLock
from raggity.store.layout import IndexLayout
from raggity.store.manifest import Fingerprint, load_manifest

Warn = Callable[[str], None]


@dataclass(frozen=True)
class SearchResult:
    query: str
    candidates: tuple[Candidate, ...]
    trace: tuple[StageTrace, ...]


def _ignore(_: str) -> None:
    pass


class Raggity:
    def __init__(self, config: Config | None = None, *, warn: Warn = _ignore) -> None:
        self.config = config or Config()
        self.layout = IndexLayout(self.config.index_dir)
        self._warn = warn
        self._snapshot: IndexSnapshot | None = None

    # -- models, each loaded on first use -------------------------------------------------
    @cached_property
    def embedder(self) -> Embedder:
        from raggity.inference.embedder import OnnxEmbedder

        cfg = self.config.embedding
        files = resolve_embedder(cfg, self.config.base_dir)
        return OnnxEmbedder(
            files.onnx,
            files.tokenizer,
            identity=files.identity,
            max_tokens=cfg.max_tokens,
            batch_size=cfg.batch_size,
            threads=cfg.threads,
        )

    @cached_property
    def tokenizer(self) -> Tokenizer:
        from raggity.inference.tokenizer import HFTokenizer

        return HFTokenizer(resolve_embedder(self.config.embedding, self.config.base_dir).tokenizer)

    @cached_property
    def scorer(self) -> Scorer | None:
        """The cross-encoder, or None (with one warning) when it is off or not installed."""
        cfg = self.config.retrieval
        if not cfg.rerank:
            return None
        folder = resolve_reranker(cfg, self.config.base_dir)
        if folder is None:
            self._warn(f"reranking skipped: {describe_reranker_fix(cfg)}")
            return None
        from raggity.inference.cross_encoder import OnnxCrossEncoder

        return OnnxCrossEncoder(
            folder, max_tokens=cfg.rerank_max_tokens, threads=self.config.embedding.threads
        )

    @cached_property
    def generator(self) -> TextGenerator:
        from raggity.inference.generator import LlamaGenerator

        cfg = self.config.generation
        model = resolve_generator(cfg, self.config.base_dir)
        return LlamaGenerator(
            model.gguf,
            identity=model.identity,
            context_size=cfg.context_size,
            threads=cfg.threads,
            seed=cfg.seed,
        )

    @cached_property
    def generator_identity(self) -> str:
        """The generator's identity without loading it (cache keys must not cost a model load)."""
        if "generator" in self.__dict__:
            return self.generator.identity
        return resolve_generator(self.config.generation, self.config.base_dir).identity

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

    @cached_property
    def graph_candidates(self) -> ExtraCandidates:
        """Graph retrieval's ranked list (see raggity.api.graph); used when [retrieval] graph is on."""
        from raggity.api.graph import GraphCandidates

        return GraphCandidates(
            self.layout, lambda: self.embedder, hops=self.config.retrieval.graph_hops, warn=self._warn
        )

    # -- ingest ------------------------------------------------------------------------------
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
        from raggity.api.sources import file_source, in_roots
        from raggity.ingest.discover import discover

        roots = [Path(p).expanduser().resolve() for p in paths] or [
            self.config.resolve(p) for p in self.config.ingest.paths
        ]
        if not roots:
            raise RaggityError(
                "nothing to ingest: no PATH given", "pass a folder, or set [ingest] paths in raggity.toml"
            )
        for root in roots:
            if not root.exists():
                raise RaggityError(f"{root}: no such file or folder", "check the path")
        with IngestLock(self.layout.lock, wait_seconds=wait_seconds):
            found = discover(roots, self.config.ingest)
            sources: list[SourceFile] = []
            early: list[Skipped] = [Skipped(s.path, s.reason) for s in found.skipped]
            for path in found.files:
                try:
                    sources.append(file_source(path, max_chars=self.config.ingest.max_file_chars))
                except OSError as exc:
                    early.append(Skipped(str(path), f"unreadable: {exc.strerror or exc}"))
            for skipped in early:
                if progress is not None:
                    progress.warn(skipped.source, skipped.reason)
            sources += self._carried_over(roots, rebuild)
            report = self.index_sources(sources, in_roots(roots), rebuild=rebuild, progress=progress)
            if self.config.retrieval.graph:
                self._update_graph(graph_progress)
        self._snapshot = None
        report = _with_skipped(report, early)
        if strict and report.skipped:
            raise IngestIncompleteError(
                f"{len(report.skipped)} file(s) skipped; index updated with everything else",
                "fix or exclude them, or run without --strict",
            )
        return report

    def _update_graph(self, progress: GraphProgress | None) -> None:
        """Brings the entity graph up to date after an ingest; a failure leaves the index committed."""
        from raggity.api.graph import update_graph

        try:
            update_graph(self, progress=progress)
        except RaggityError as exc:
            self._warn(f"entity graph not updated: {exc}; run `rag graph-build` to retry")

    def index_sources(
        self,
        sources: Sequence[SourceFile],
        in_scope: Callable[[str], bool],
        *,
        rebuild: bool = False,
        progress: IngestProgress | None = None,
    ) -> IngestReport:
        """Brings the index in step with `sources`; the caller holds the ingest lock."""
        sync = IndexSync(
            self.layout,
            embedder=self.embedder,
            tokenizer=self.tokenizer,
            chunking=self.chunking(),
            progress=progress,
        )
        return sync.run(sources, in_scope, rebuild=rebuild)

    def _carried_over(self, roots: Sequence[Path], rebuild: bool) -> list[SourceFile]:
        """A rebuild empties the whole index, so files indexed from other folders are indexed again
        with the new settings instead of silently disappearing."""
        from raggity.api.sources import file_source, in_roots

        try:
            manifest = load_manifest(self.layout.manifest)
        except IndexStateError:
            return []  # damaged: nothing trustworthy to carry over
        chunking = self.chunking()
        current = Fingerprint(self.embedder.identity, chunking.chunk_tokens, chunking.parent_tokens)
        if not rebuild and manifest.fingerprint in (None, current):
            return []
        inside = in_roots(list(roots))
        limit = self.config.ingest.max_file_chars
        return [
            file_source(Path(s), max_chars=limit)
            for s in manifest.sources
            if not inside(s) and Path(s).is_file()
        ]

    def _check_fingerprint(self) -> None:
        """Query vectors from one embedder are meaningless against an index built by another."""
        built = load_manifest(self.layout.manifest).fingerprint
        files = resolve_embedder(self.config.embedding, self.config.base_dir)
        if built is not None and built.embedder != files.identity:
            raise IndexStateError(
                f"{self.layout.root}: index was built with embedder {built.embedder}, "
                f"but the config now uses {files.identity}",
                "run `rag ingest --rebuild` to re-embed with the configured model",
            )

    def chunking(self) -> ChunkingSettings:
        cfg = self.config.ingest
        return ChunkingSettings(cfg.chunk_tokens, max(cfg.parent_tokens, cfg.chunk_tokens))

    # -- query -------------------------------------------------------------------------------
    def _search_engine(self, mode: Mode, candidates: int | None, scorer: Scorer | None) -> HybridSearch:
        if not self.layout.exists():
            raise IndexStateError(f"{self.layout.root}: no index yet", "run `rag ingest PATH` first")
        if self._snapshot is None:
            snapshot = IndexSnapshot(self.layout)
            self._check_fingerprint()
            self._snapshot = snapshot
        cfg = self.config.retrieval
        if not cfg.hybrid and mode == "hybrid":
            mode = "dense"
        options = SearchOptions(candidates or cfg.candidates, cfg.rrf_k, mode, cfg.dedup_cosine)
        extra = self.graph_candidates if cfg.graph else None
        return HybridSearch(self._snapshot, options, scorer, extra)

    def embed_queries(self, texts: Sequence[str], trace: TraceRecorder) -> list[tuple[float, ...]]:
        with trace.stage("embed", len(texts)) as rec:
            vectors = self.embedder.embed(list(texts))
            rec.n_out = len(texts)
        return [tuple(float(x) for x in row) for row in vectors]

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
    ) -> list[Candidate]:
        engine = self._search_engine(mode, candidates, self.scorer if rerank else None)
        if transforms is not None and transforms.active:
            return retrieve_planned(
                question,
                transforms,
                transforms=self.transforms(use_cache),
                embed=(lambda texts: self.embed_queries(texts, trace)) if mode != "bm25" else None,
                search=lambda text, queries: engine.run(text, queries, trace),
                trace=trace,
                warn=self._warn,
            )
        vector = self.embed_queries([question], trace)[0] if mode != "bm25" else None
        return engine.run(question, [Query(question, "question", vector)], trace)

    def search(
        self,
        query: str,
        *,
        k: int | None = None,
        mode: Mode = "hybrid",
        candidates: int | None = None,
        rerank: bool = True,
    ) -> SearchResult:
        trace = TraceRecorder()
        found = self.retrieve(query, trace, mode=mode, candidates=candidates, rerank=rerank)
        from raggity.pipeline.ask import select_candidates

        settings = AskSettings(
            top_k=k or self.config.retrieval.top_k, relevance_floor=self.config.retrieval.relevance_floor
        )
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
    ) -> Answer:
        """hyde/step_back/expand/use_cache: None means as configured."""
        if not question.strip():
            raise RaggityError("the question is empty", 'ask something, e.g. rag ask "how do I install it?"')
        trace = TraceRecorder()
        r = self.config.retrieval
        options = resolve_options(
            TransformOptions(r.hyde, r.step_back, r.expand),
            hyde=hyde,
            step_back=step_back,
            expand=expand,
            decompose=decompose,
        )
        candidates = self.retrieve(question, trace, transforms=options, use_cache=use_cache)
        store = self.cache_store(use_cache)
        assert self._snapshot is not None
        return answer_from_candidates(
            question,
            candidates,
            settings=self._ask_settings(),
            table=self._snapshot.table,
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
            r.top_k, r.sufficiency_floor, r.relevance_floor, r.parent_document, g.max_tokens, g.temperature
        )


def _with_skipped(report: IngestReport, early: Sequence[Skipped]) -> IngestReport:
    return replace(report, skipped=tuple(early) + report.skipped)
