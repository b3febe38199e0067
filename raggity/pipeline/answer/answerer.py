"""The answer room's one entry: an answer from retrieved candidates, from (config, models).

Abstain, select, expand to parents, check coverage, focus, prompt, the model's judgement, generate
with sources attached, check citations (stages.py runs them, one traced stage each). It imports
nothing from the ingest or search rooms: an import-linter contract says so. Every door a user opens
(ask, chat, MCP) answers through `Answerer.answer`, so each makes the same decision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from raggity.config.schema import Config
from raggity.core.protocols import Vectors
from raggity.core.trace import TraceRecorder
from raggity.core.types import Answer, Candidate
from raggity.pipeline.answer.cache import AnswerCache
from raggity.pipeline.answer.stages import AskSettings, answer_from_candidates
from raggity.pipeline.answer.thresholds import resolve_thresholds
from raggity.pipeline.models import Models, Warn, no_warnings
from raggity.store.cache_store import CacheStore
from raggity.store.layout import IndexLayout
from raggity.store.manifest import Manifest
from raggity.store.vector_table import VectorTableReader


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
            r.sufficiency_floor,
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
        on_token: Callable[[str], None] | None = None,
        use_cache: bool | None = None,
        settings: AskSettings | None = None,
    ) -> Answer:
        """Abstain, decline, or generate and check citations; `table` and `manifest` are the index
        the candidates came from (parent passages are read from the one, each file's indexed state
        from the other)."""
        on = self._config.generation.cache if use_cache is None else use_cache
        cache = (
            AnswerCache(
                CacheStore(IndexLayout(self._config.index_dir).cache),
                self._models.generator_identity,
                self._config.generation.seed,
            )
            if on
            else None
        )
        return answer_from_candidates(
            question,
            candidates,
            settings=settings or self.settings(),
            table=table,
            manifest=manifest,
            generator=lambda: self._models.generator,
            trace=trace,
            on_token=on_token,
            cache=cache,
            embed=self._embed_after_generating,
        )

    def _embed_after_generating(self, texts: Sequence[str]) -> Vectors:
        """Embeds for citations by meaning, once the answer is written. `rag ask` (one_question)
        let the embedder go after its search; the generator goes first here, so that the two are
        never held at once and the process's peak memory stays the generator's."""
        self._models.done_generating()
        return self._models.embed(texts)
