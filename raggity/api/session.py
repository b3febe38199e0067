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
from raggity.pipeline.ask import AskSettings, answer_from_candidates
from raggity.pipeline.generation import TextGenerator
from raggity.pipeline.ingest import IndexSync, IngestProgress, IngestReport, Skipped, SourceFile
from raggity.pipeline.search import HybridSearch, IndexSnapshot, Mode, SearchOptions
from raggity.store.ingest_lock import IngestLock
from raggity.store.layout import IndexLayout

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

    # -- ingest ------------------------------------------------------------------------------
    def ingest(
        self,
        paths: Sequence[Path] = (),
        *,
        rebuild: bool = False,
        strict: bool = False,
        wait_seconds: float = 0.0,
        progress: IngestProgress | None = None,
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
                    sources.append(file_source(path))
                except OSError as exc:
                    early.append(Skipped(str(path), f"unreadable: {exc.strerror or exc}"))
            for skipped in early:
                if progress is not None:
                    progress.warn(skipped.source, skipped.reason)
            sync = IndexSync(
                self.layout,
                embedder=self.embedder,
                tokenizer=self.tokenizer,
                chunking=self.chunking(),
                progress=progress,
            )
            report = sync.run(sources, in_roots(roots), rebuild=rebuild)
        self._snapshot = None
        report = _with_skipped(report, early)
        if strict and report.skipped:
            raise IngestIncompleteError(
                f"{len(report.skipped)} file(s) skipped; index updated with everything else",
                "fix or exclude them, or run without --strict",
            )
        return report

    def chunking(self) -> ChunkingSettings:
        cfg = self.config.ingest
        return ChunkingSettings(cfg.chunk_tokens, max(cfg.parent_tokens, cfg.chunk_tokens))

    # -- query -------------------------------------------------------------------------------
    def _search_engine(self, mode: Mode, candidates: int | None, scorer: Scorer | None) -> HybridSearch:
        if not self.layout.exists():
            raise IndexStateError(f"{self.layout.root}: no index yet", "run `rag ingest PATH` first")
        if self._snapshot is None:
            self._snapshot = IndexSnapshot(self.layout)
        cfg = self.config.retrieval
        if not cfg.hybrid and mode == "hybrid":
            mode = "dense"
        options = SearchOptions(candidates or cfg.candidates, cfg.rrf_k, mode, cfg.dedup_cosine)
        return HybridSearch(self._snapshot, options, scorer)

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
    ) -> list[Candidate]:
        engine = self._search_engine(mode, candidates, self.scorer if rerank else None)
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

    def ask(self, question: str, *, on_token: Callable[[str], None] | None = None) -> Answer:
        if not question.strip():
            raise RaggityError("the question is empty", 'ask something, e.g. rag ask "how do I install it?"')
        trace = TraceRecorder()
        candidates = self.retrieve(question, trace)
        assert self._snapshot is not None
        return answer_from_candidates(
            question,
            candidates,
            settings=self._ask_settings(),
            table=self._snapshot.table,
            generator=lambda: self.generator,
            trace=trace,
            on_token=on_token,
        )

    def _ask_settings(self) -> AskSettings:
        r, g = self.config.retrieval, self.config.generation
        return AskSettings(
            r.top_k, r.sufficiency_floor, r.relevance_floor, r.parent_document, g.max_tokens, g.temperature
        )


def _with_skipped(report: IngestReport, early: Sequence[Skipped]) -> IngestReport:
    return replace(report, skipped=tuple(early) + report.skipped)
