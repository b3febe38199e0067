"""The Python API: `Raggity(config)` with ingest(), search() and ask().

A thin front: it holds the config and the models, and delegates to the pipeline's three rooms,
each built from (config, models): `Indexer` (pipeline/ingest/), `Searcher` (pipeline/search/) and
`Answerer` (pipeline/answer/). Every door a user opens (rag ask, rag chat, rag mcp) answers through
`Raggity.answer`, so each makes the same decision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from raggity.config.schema import Config
from raggity.core.errors import RaggityError
from raggity.core.protocols import Embedder, Generator, Scorer, Tokenizer
from raggity.core.trace import OnStage, TraceRecorder
from raggity.core.types import Answer, Candidate, TextDocument
from raggity.pipeline.model_loading import Models, Warn, no_warnings, with_generation_model
from raggity.pipeline.search.hybrid import Mode
from raggity.pipeline.search.searcher import Searcher, SearchResult
from raggity.store.layout import IndexLayout

if TYPE_CHECKING:
    # Types only: `rag search` must not pay for the answer, graph and ingest rooms' imports.
    from raggity.pipeline.answer.answerer import Answerer
    from raggity.pipeline.answer.settings import AskSettings
    from raggity.pipeline.graph.build import GraphProgress
    from raggity.pipeline.ingest.indexer import Indexer
    from raggity.pipeline.ingest.sync import IngestProgress, IngestReport

__all__ = [
    "AskSettings",
    "Models",
    "Raggity",
    "SearchResult",
    "models_for_one_question",
    "with_generation_model",
]


def __getattr__(name: str) -> object:
    # AskSettings stays importable from here without loading the answer room on `import`.
    if name == "AskSettings":
        from raggity.pipeline.answer.settings import AskSettings  # noqa: PLC0415 - see above

        return AskSettings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def models_for_one_question(config: Config, question: str, warn: Warn = no_warnings) -> Models:
    """The models of a process that answers `question` and exits (`rag ask`): the search models are
    let go once its search is done, and the generator loads with the context that question needs,
    not the configured one (see context_for_question). Its peak memory is what is left. For that one
    question only: another asked of the same models reloads the generator, sized for the first (a
    longer question then gets fewer source tokens, never more than the context holds)."""
    from raggity.pipeline.answer.budget import context_for_question  # noqa: PLC0415 - search must not pay for the answer room's imports

    return Models(
        config,
        warn=warn,
        one_question=True,
        generator_context=context_for_question(question, config.generation),
    )


class Raggity:
    """One knowledge base: a configuration, its index folder, and the models it uses.

    Models are collaborators handed in the way httpx clients take `transport=`: pass a `Models`, or
    any of `embedder`, `tokenizer` (the embedder's, which chunking counts with), `scorer`
    (cross-encoder) and `generator` as a shortcut; each model not given is the real one the config
    names, loaded on first use, so `rag search` never loads the generator. Tests pass doubles
    (raggity.testing) here instead of patching. `warn` receives one-line warnings (a missing
    reranker, a missing entity graph, a rebuild in progress).
    """

    def __init__(
        self,
        config: Config | None = None,
        *,
        models: Models | None = None,
        embedder: Embedder | None = None,
        tokenizer: Tokenizer | None = None,
        scorer: Scorer | None = None,
        generator: Generator | None = None,
        warn: Warn = no_warnings,
    ) -> None:
        self.config = config or Config()
        self.layout = IndexLayout(self.config.index_dir)
        if models is not None and any(m is not None for m in (embedder, tokenizer, scorer, generator)):
            raise TypeError("pass either models= or individual models, not both")
        self.models = models or Models(
            self.config, embedder=embedder, tokenizer=tokenizer, scorer=scorer, generator=generator, warn=warn
        )
        self._warn = warn
        self.searcher = Searcher(self.config, self.models, warn=warn)

    @cached_property
    def answerer(self) -> Answerer:
        from raggity.pipeline.answer.answerer import Answerer  # noqa: PLC0415 - search must not pay for the answer room's imports

        return Answerer(self.config, self.models, self._warn)

    def with_generator(self, generator: Generator) -> Raggity:
        """A session on the same index, with the same models and warnings, that answers through
        `generator` (a conversation wraps the model to put its history into each answer's prompt)."""
        return Raggity(self.config, models=self.models.with_generator(generator), warn=self._warn)

    # -- ingest --------------------------------------------------------------------------------
    @property
    def indexer(self) -> Indexer:
        from raggity.pipeline.ingest.indexer import Indexer  # noqa: PLC0415 - search must not pay for ingest's imports

        return Indexer(self.config, self.models, warn=self._warn)

    def ingest(
        self,
        paths: Sequence[Path] = (),
        *,
        rebuild: bool = False,
        strict: bool = False,
        wait_seconds: float = 0.0,
        progress: IngestProgress | None = None,
        graph_progress: GraphProgress | None = None,
        engine: str | None = None,
        ray_address: str | None = None,
    ) -> IngestReport:
        """Indexes `paths` (default: the config's [ingest] paths); see raggity.pipeline.ingest.run.
        `engine` ("local", "ray") and `ray_address` override [ingest] engine and ray_address."""
        from raggity.pipeline.ingest.run import IngestRequest  # noqa: PLC0415 - search must not pay for ingest's imports

        indexer = self.indexer
        request = IngestRequest(indexer.roots(paths), rebuild, strict, wait_seconds, engine, ray_address)
        try:
            return indexer.ingest(request, progress=progress, graph_progress=graph_progress)
        finally:
            self.searcher.forget()

    def index_documents(
        self,
        documents: Sequence[TextDocument],
        *,
        rebuild: bool = False,
        wait_seconds: float = 0.0,
        progress: IngestProgress | None = None,
    ) -> IngestReport:
        """Makes the index hold exactly `documents`, held in memory (a benchmark corpus, generated
        pages): new and changed ones are embedded, unchanged ones kept, every other source removed."""
        try:
            return self.indexer.index_documents(
                documents, rebuild=rebuild, wait_seconds=wait_seconds, progress=progress
            )
        finally:
            self.searcher.forget()

    # -- query ---------------------------------------------------------------------------------
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
        return self.searcher.search(
            query, k=k, mode=mode, candidates=candidates, rerank=rerank, path_glob=path_glob
        )

    def ask(
        self,
        question: str,
        *,
        on_token: Callable[[str], None] | None = None,
        on_stage: OnStage | None = None,
        hyde: bool | None = None,
        step_back: bool | None = None,
        expand: bool | None = None,
        decompose: bool = False,
        use_cache: bool | None = None,
        top_k: int | None = None,
        path_glob: str | None = None,
    ) -> Answer:
        """hyde/step_back/expand/use_cache/top_k: None means as configured; `path_glob` keeps only
        files whose path matches it. `on_token` receives the answer as it is written, `on_stage`
        each stage's name as it starts."""
        if not question.strip():
            raise RaggityError("the question is empty", 'ask something, e.g. rag ask "how do I install it?"')
        trace = TraceRecorder(on_stage)
        options = self.searcher.transform_options(
            hyde=hyde, step_back=step_back, expand=expand, decompose=decompose
        )
        candidates = self.searcher.retrieve(
            question, trace, transforms=options, use_cache=use_cache, path_glob=path_glob
        )
        self.models.done_searching()
        return self.answer(
            question, candidates, trace, on_token=on_token, use_cache=use_cache, settings=self.settings(top_k)
        )

    def settings(self, top_k: int | None = None) -> AskSettings:
        """The answer settings the config gives; change them with dataclasses.replace and pass
        them to `answer` to answer with other settings (see Answerer.settings)."""
        return self.answerer.settings(top_k=top_k)

    def answer(
        self,
        question: str,
        candidates: Sequence[Candidate],
        trace: TraceRecorder,
        *,
        on_token: Callable[[str], None] | None = None,
        use_cache: bool | None = None,
        settings: AskSettings | None = None,
    ) -> Answer:
        """The answer from already retrieved `candidates`: abstain, decline, or generate and check
        citations, with `settings` (default: the config's)."""
        snapshot = self.searcher.snapshot
        return self.answerer.answer(
            question,
            candidates,
            trace,
            table=snapshot.table,
            manifest=snapshot.manifest,
            on_token=on_token,
            use_cache=use_cache,
            settings=settings,
        )
