"""The ask pipeline after retrieval: abstain or select, expand, order, prompt, generate, check.

Each step is a plain function returning `Staged`; `answer_from_candidates` runs them in order
through the trace recorder. A new answer stage is one more function and one more `trace.run` line.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial

from raggity.config.schema import GenerationConfig, RetrievalConfig
from raggity.core.trace import CandidateStage, Staged, TraceRecorder, passed
from raggity.core.types import ABSTAIN_MESSAGE, Answer, Candidate, Chunk
from raggity.pipeline.answer_cache import AnswerCache
from raggity.pipeline.citations import CitationCheck, check_citations
from raggity.pipeline.generation import TextGenerator
from raggity.pipeline.prompt import PromptSource, build_messages
from raggity.retrieval.abstain import should_abstain
from raggity.retrieval.reorder import lost_in_the_middle
from raggity.retrieval.selection import SelectionPolicy
from raggity.store.vector_table import VectorTableReader

# Tokens kept free for the chat template and the system prompt around the sources.
_PROMPT_OVERHEAD = 320


@dataclass(frozen=True)
class AskSettings:
    """The ask-time settings, defaulting to the configuration's own defaults."""

    top_k: int = RetrievalConfig.top_k
    sufficiency_floor: float = RetrievalConfig.sufficiency_floor
    relevance_floor: float = RetrievalConfig.relevance_floor
    parent_document: bool = RetrievalConfig.parent_document
    max_tokens: int = GenerationConfig.max_tokens
    temperature: float = GenerationConfig.temperature

    @property
    def cache_options(self) -> dict[str, object]:
        """The settings that change a generated answer, for the answer cache's key."""
        return {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "parent_document": self.parent_document,
        }


def select_candidates(candidates: Sequence[Candidate], settings: AskSettings) -> list[Candidate]:
    """relevance_floor applies to rerank scores only: RRF scores have no absolute meaning."""
    policy = SelectionPolicy(settings.top_k, settings.relevance_floor)
    scores = [c.rerank_score if c.rerank_score is not None else 1.0 for c in candidates]
    return policy.select(candidates, scores)


def expand_to_parents(selected: Sequence[Candidate], table: VectorTableReader) -> list[Chunk]:
    """Each hit is replaced by its parent passage (its children joined in order); hits that share a
    parent become one source, at the best hit's rank."""
    siblings: dict[str, list[Chunk]] = {}
    for chunk in table.fetch_by_parent(list(dict.fromkeys(c.chunk.parent_id for c in selected))):
        siblings.setdefault(chunk.parent_id, []).append(chunk)
    expanded: list[Chunk] = []
    seen: set[str] = set()
    for candidate in selected:
        parent_id = candidate.chunk.parent_id
        if parent_id in seen:
            continue
        seen.add(parent_id)
        children = sorted(siblings.get(parent_id, [candidate.chunk]), key=lambda c: c.ordinal)
        first, last = children[0].location, children[-1].location
        expanded.append(
            Chunk(
                id=parent_id,
                source=candidate.chunk.source,
                text="".join(c.text for c in children),
                heading=children[0].heading,
                location=first.through(last),
                parent_id=parent_id,
                ordinal=children[0].ordinal,
                n_tokens=sum(c.n_tokens for c in children),
            )
        )
    return expanded


def fit_to_budget(chunks: Sequence[Chunk], count_tokens: Callable[[str], int], budget: int) -> list[Chunk]:
    """Keeps chunks in rank order while they fit; the best chunk is cut to fit rather than dropped."""
    kept: list[Chunk] = []
    used = 0
    for chunk in chunks:
        cost = count_tokens(chunk.text) + 24
        if used + cost <= budget:
            kept.append(chunk)
            used += cost
        elif not kept:
            ratio = max(budget - 24, 1) / max(cost, 1)
            kept.append(_truncated(chunk, int(len(chunk.text) * ratio)))
            break
    return kept


def _truncated(chunk: Chunk, chars: int) -> Chunk:
    return Chunk(
        chunk.id,
        chunk.source,
        chunk.text[:chars],
        chunk.heading,
        chunk.location,
        chunk.parent_id,
        chunk.ordinal,
        chunk.n_tokens,
    )


def abstain_stage(settings: AskSettings) -> CandidateStage:
    """Nothing passes when the best cosine with the question is below the sufficiency floor."""

    def stage(candidates: list[Candidate]) -> Staged[list[Candidate]]:
        best = max((c.dense_cosine for c in candidates if c.dense_cosine is not None), default=None)
        abstain = should_abstain([c.dense_cosine for c in candidates], settings.sufficiency_floor)
        kept = [] if abstain else candidates
        return passed(kept, best_cosine=best, floor=settings.sufficiency_floor, abstained=abstain)

    return stage


def select_stage(settings: AskSettings) -> CandidateStage:
    def stage(candidates: list[Candidate]) -> Staged[list[Candidate]]:
        selected = select_candidates(candidates, settings)
        return passed(selected, top_k=settings.top_k, relevance_floor=settings.relevance_floor)

    return stage


@dataclass(frozen=True)
class Prompt:
    sources: list[PromptSource]
    messages: list[dict[str, str]]


def build_prompt(
    question: str, chunks: Sequence[Chunk], model: TextGenerator, settings: AskSettings
) -> Staged[Prompt]:
    budget = model.context_size - settings.max_tokens - _PROMPT_OVERHEAD - model.count_tokens(question)
    ordered = lost_in_the_middle(fit_to_budget(chunks, model.count_tokens, budget))
    sources = [PromptSource(n, chunk, chunk.text) for n, chunk in enumerate(ordered, start=1)]
    return Staged(Prompt(sources, build_messages(question, sources)), len(sources), {"budget_tokens": budget})


def generate(
    model: TextGenerator, prompt: Prompt, settings: AskSettings, on_token: Callable[[str], None] | None
) -> Staged[str]:
    pieces: list[str] = []
    detail: dict[str, object] = {}
    began = time.perf_counter()
    for piece in model.stream(
        prompt.messages, max_tokens=settings.max_tokens, temperature=settings.temperature
    ):
        if not pieces:
            # Prompt prefill plus one decoded token: the model's own share of time to first token.
            detail["first_token_ms"] = round((time.perf_counter() - began) * 1000, 1)
        pieces.append(piece)
        if on_token is not None:
            on_token(piece)
    text = "".join(pieces).strip()
    detail["chars"] = len(text)
    return Staged(text, 1, detail)


def answer_from_candidates(
    question: str,
    candidates: Sequence[Candidate],
    *,
    settings: AskSettings,
    table: VectorTableReader,
    generator: Callable[[], TextGenerator],
    trace: TraceRecorder,
    on_token: Callable[[str], None] | None = None,
    cache: AnswerCache | None = None,
) -> Answer:
    """The ask pipeline after retrieval, one traced stage at a time."""
    kept = trace.run("abstain", len(candidates), partial(abstain_stage(settings), list(candidates)))
    selected = trace.run("select", len(kept), partial(select_stage(settings), kept)) if kept else []
    if not selected:
        return Answer(question, ABSTAIN_MESSAGE, True, (), trace.stages)
    chunks = trace.run(
        "parent-expansion",
        len(selected),
        lambda: _expanded(selected, table, settings.parent_document),
    )
    key = None
    if cache is not None:
        key = cache.key(question, chunks, settings.cache_options)
        hit = trace.run("answer-cache", len(chunks), partial(_cached, cache, key))
        if hit is not None:  # returned before the generator is loaded
            if on_token is not None:
                on_token(hit.text)
            return replace(hit, question=question, trace=trace.stages)
    model = trace.run("load-model", 0, lambda: _loaded(generator))
    prompt = trace.run("prompt", len(chunks), partial(build_prompt, question, chunks, model, settings))
    text = trace.run("generate", len(prompt.sources), partial(generate, model, prompt, settings, on_token))
    check = trace.run("citations", len(prompt.sources), partial(_checked, text, prompt.sources))
    answer = Answer(
        question,
        text,
        False,
        check.citations,
        trace.stages,
        unsupported_sentences=check.unsupported_sentences,
    )
    if cache is not None and key is not None:
        cache.put(key, answer)
    return answer


def _expanded(
    selected: list[Candidate], table: VectorTableReader, parent_document: bool
) -> Staged[list[Chunk]]:
    chunks = expand_to_parents(selected, table) if parent_document else [c.chunk for c in selected]
    return Staged(chunks, len(chunks), {"enabled": parent_document})


def _cached(cache: AnswerCache, key: str) -> Staged[Answer | None]:
    hit = cache.get(key)
    return Staged(hit, 0 if hit is None else 1, {"hit": hit is not None, "key": key[:16]})


def _loaded(generator: Callable[[], TextGenerator]) -> Staged[TextGenerator]:
    model = generator()
    return Staged(model, 0, {"model": model.identity})


def _checked(text: str, sources: Sequence[PromptSource]) -> Staged[CitationCheck]:
    check = check_citations(text, sources)
    return Staged(
        check,
        len(check.citations),
        {"unsupported": len(check.unsupported_sentences), "invalid": list(check.invalid_numbers)},
    )
