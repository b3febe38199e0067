"""The answer room's one entry: an answer from retrieved candidates, from (config, models).

`Answerer.answer` is the story of a question after retrieval, one traced stage at a time (stages.py
holds each stage; the trace records each under the name given here):

    abstain -> select -> parent-expansion -> coverage        (may abstain: nothing worth reading)
    -> answer-cache                                          (may return a stored answer)
    -> load-model -> focus -> prompt -> model-judgement      (may refuse: the model's own judgement)
    -> generate [-> generate-strict] -> citations            (streamed to on_token as it is written)
    -> meaning -> support -> freshness                       (checks of the written answer)

It imports nothing from the ingest or search rooms: an import-linter contract says so. Every door a
user opens (ask, chat, MCP) answers through `Answerer.answer`, so each makes the same decision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from raggity.config.schema import Config
from raggity.core.protocols import Generator, Vectors
from raggity.core.trace import TraceRecorder
from raggity.core.types import ABSTAIN_MESSAGE, Answer, Candidate, Passage
from raggity.pipeline.answer.attribution import flag_sources, sources_read
from raggity.pipeline.answer.cache import AnswerCache
from raggity.pipeline.answer.closest import closest_passages
from raggity.pipeline.answer.prompt import STRICT_INSTRUCTION, build_messages
from raggity.pipeline.answer.settings import AskSettings
from raggity.pipeline.answer.stages import (
    NO_ANSWER_MESSAGE,
    REFUSAL_MESSAGE,
    Prompt,
    abstain_stage,
    build_prompt,
    cache_stage,
    citations_stage,
    coverage_stage,
    focus_stage,
    freshness_stage,
    generate_stage,
    judge_stage,
    load_model_stage,
    meaning_stage,
    parents_stage,
    select_stage,
    support_stage,
)
from raggity.pipeline.answer.thresholds import resolve_thresholds
from raggity.pipeline.model_loading import Models, Warn, no_warnings
from raggity.store.cache_store import CacheStore
from raggity.store.layout import IndexLayout
from raggity.store.manifest import Manifest
from raggity.store.vector_table import VectorTableReader

OnToken = Callable[[str], None]


class Answerer:
    def __init__(self, config: Config, models: Models, warn: Warn = no_warnings) -> None:
        self._config = config
        self._models = models
        self._warn = warn
        self._warned = False

    def settings(self, *, top_k: int | None = None) -> AskSettings:
        """The answer settings the config gives (thresholds calibrated for its model), the public
        door for callers that answer with other settings (benchmarks, calibration): change the
        returned value with dataclasses.replace and pass it to `answer`."""
        r, g = self._config.retrieval, self._config.generation
        # Read on every question, so that a long-running server answers with a calibration made
        # while it ran (a small file read; a packaged model's hash is pinned, no weights are read).
        resolved = resolve_thresholds(self._config)
        if resolved.origin == "default" and not self._warned:
            self._warned = True
            self._warn(f"answer thresholds {resolved.summary}")
        return AskSettings(
            r.top_k if top_k is None else top_k,
            resolved.floor(r.sufficiency_floor),
            r.relevance_floor,
            r.parent_document,
            g.max_tokens,
            g.source_tokens,
            g.temperature,
            resolved.thresholds,
        )

    def answer(
        self,
        question: str,
        candidates: Sequence[Candidate],
        trace: TraceRecorder,
        *,
        table: VectorTableReader,
        manifest: Manifest,
        on_token: OnToken | None = None,
        use_cache: bool | None = None,
        settings: AskSettings | None = None,
    ) -> Answer:
        """Abstain, decline, or generate and check citations; `table` and `manifest` are the index
        the candidates came from (parent passages are read from the one, each file's indexed state
        from the other). A decline carries the closest passages retrieval found, so that it still
        shows where to read; every answer says which of its files changed since they were indexed."""
        settings = settings or self.settings()
        cache = self._cache(use_cache)
        closest = closest_passages(question, candidates)
        answer, cache_key = self._decide(
            question, candidates, closest, settings=settings, table=table, trace=trace,
            on_token=on_token, cache=cache,
        )  # fmt: skip
        # After _decide has returned, so that nothing here holds the generator: the embedder for
        # citations by meaning is loaded only after the generator is let go, and only for sentences
        # no source supports word for word. A cached answer was stored after this stage, with the
        # sources it attached.
        if answer.unsupported_sentences and not answer.declined and not answer.cached:
            n = len(answer.unsupported_sentences)
            answer = trace.run("meaning", n, lambda: meaning_stage(answer, self._embed_after_generating))
        if not answer.declined:
            answer = trace.run("support", len(answer.citations), lambda: support_stage(answer, closest))
        if cache is not None and cache_key is not None and not answer.declined:
            cache.put(cache_key, answer)
        root = self._config.source_root
        checked = trace.run(
            "freshness", 1, lambda: freshness_stage(answer, manifest, None if root is None else str(root))
        )
        return replace(checked, trace=trace.stages)

    def _decide(
        self,
        question: str,
        candidates: Sequence[Candidate],
        closest: tuple[Passage, ...],
        *,
        settings: AskSettings,
        table: VectorTableReader,
        trace: TraceRecorder,
        on_token: OnToken | None,
        cache: AnswerCache | None,
    ) -> tuple[Answer, str | None]:
        """The answer, and the cache key to store it under (None: not to be stored)."""
        kept = trace.run("abstain", len(candidates), lambda: abstain_stage(candidates, settings))
        selected = trace.run("select", len(kept), lambda: select_stage(kept, settings)) if kept else []
        if not selected:
            return _abstention(question, closest, trace), None
        chunks = trace.run(
            "parent-expansion",
            len(selected),
            lambda: parents_stage(selected, table, settings.parent_document),
        )
        if not trace.run("coverage", len(chunks), lambda: coverage_stage(question, chunks, settings)):
            return _abstention(question, closest, trace), None
        key = None
        if cache is not None:
            key = cache.key(question, chunks, settings.cache_options)
            hit = trace.run("answer-cache", len(chunks), lambda: cache_stage(cache, key))
            if hit is not None:  # returned before the generator is loaded
                if on_token is not None:
                    on_token(hit.text)
                return _restored(hit, question, trace), None
        model = trace.run("load-model", 0, lambda: load_model_stage(self._generator))
        focused = trace.run("focus", len(chunks), lambda: focus_stage(question, chunks))
        prompt = trace.run(
            "prompt", len(focused), lambda: build_prompt(question, chunks, focused, model, settings)
        )
        answer = _answer_with_model(question, model, prompt, settings, trace, on_token)
        if answer.refused:
            # A refusal depends on the model's judgement of this prompt: it is not cached.
            return replace(answer, closest=closest), None
        return answer, key

    def _cache(self, use_cache: bool | None) -> AnswerCache | None:
        """The answer cache of the index, unless this question (or [generation] cache) turns it off."""
        if not (self._config.generation.cache if use_cache is None else use_cache):
            return None
        return AnswerCache(
            CacheStore(IndexLayout(self._config.index_dir).cache),
            self._models.generator_identity,
            self._config.generation.seed,
        )

    def _generator(self) -> Generator:
        return self._models.generator

    def _embed_after_generating(self, texts: Sequence[str]) -> Vectors:
        """Embeds for citations by meaning, once the answer is written. `rag ask` (one_question)
        let the embedder go after its search; the generator goes first here, so that the two are
        never held at once and the process's peak memory stays the generator's."""
        self._models.done_generating()
        return self._models.embed(texts)


def _answer_with_model(
    question: str,
    model: Generator,
    prompt: Prompt,
    settings: AskSettings,
    trace: TraceRecorder,
    on_token: OnToken | None,
) -> Answer:
    """The model's judgement of the prompt, then the answer with sources attached to its sentences
    (one stricter retry when the reply was only markers, headings or names, or said the question
    back)."""
    n = len(prompt.sources)
    if not trace.run("model-judgement", n, lambda: judge_stage(model, prompt, settings)):
        return _refusal(question, REFUSAL_MESSAGE, prompt, trace)
    result = trace.run(
        "generate",
        n,
        lambda: generate_stage(
            model, question, prompt.messages, prompt.sources, settings,
            on_token=on_token, asked_at=trace.started,
        ),
    )  # fmt: skip
    if not result.shown and not result.refused and result.shape != "prose":
        strict = build_messages(question, prompt.sources, STRICT_INSTRUCTION)
        first_shape = result.shape
        result = trace.run(
            "generate-strict",
            n,
            lambda: generate_stage(
                model, question, strict, prompt.sources, settings,
                on_token=on_token, asked_at=trace.started, first_shape=first_shape,
            ),
        )  # fmt: skip
    result = trace.run("citations", n, lambda: citations_stage(result))
    if result.refused:
        return _refusal(question, REFUSAL_MESSAGE, prompt, trace)
    if not result.shown:
        return _refusal(question, NO_ANSWER_MESSAGE, prompt, trace)
    attribution = result.attribution
    return Answer(
        question,
        attribution.text,
        False,
        attribution.citations,
        trace.stages,
        unsupported_sentences=attribution.unsupported_sentences,
        sources_read=sources_read(prompt.sources, attribution.citations),
    )


def _abstention(question: str, closest: tuple[Passage, ...], trace: TraceRecorder) -> Answer:
    return Answer(question, ABSTAIN_MESSAGE, True, (), trace.stages, closest=closest)


def _refusal(question: str, message: str, prompt: Prompt, trace: TraceRecorder) -> Answer:
    read = sources_read(prompt.sources, ())
    return Answer(question, message, False, (), trace.stages, refused=True, sources_read=read)


def _restored(hit: Answer, question: str, trace: TraceRecorder) -> Answer:
    """A cached answer as asked now: this question's words and trace, its sources flagged anew."""
    return replace(
        hit,
        question=question,
        trace=trace.stages,
        citations=flag_sources(hit.citations),
        sources_read=flag_sources(hit.sources_read),
    )
