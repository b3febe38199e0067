"""The ask pipeline after retrieval: abstain or select, expand, order, prompt, generate, check."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from raggity.config.schema import GenerationConfig, RetrievalConfig
from raggity.core.trace import TraceRecorder
from raggity.core.types import ABSTAIN_MESSAGE, Answer, Candidate, Chunk, Location
from raggity.pipeline.answer_cache import AnswerCache
from raggity.pipeline.answer_stream import AttributedStream, StreamResult
from raggity.pipeline.answerability import (
    ContinuationScorer,
    Thresholds,
    coverage,
    judge_coverage,
    judge_refusal,
)
from raggity.pipeline.attribution import flag_sources
from raggity.pipeline.citations import content_words
from raggity.pipeline.focus import focus_sources
from raggity.pipeline.generation import TextGenerator
from raggity.pipeline.prompt import (
    REFUSAL_OPENING,
    STRICT_INSTRUCTION,
    PromptSource,
    build_messages,
)
from raggity.retrieval.abstain import should_abstain
from raggity.retrieval.selection import SelectionPolicy
from raggity.store.vector_table import VectorTableReader

# Tokens kept free for the chat template and the system prompt around the sources.
_PROMPT_OVERHEAD = 320

# Shown instead of an answer when the model judged that the sources do not answer the question.
REFUSAL_MESSAGE = "The sources found do not answer this question."
# Shown when the model wrote only citation markers, headings or names, twice.
NO_ANSWER_MESSAGE = (
    "The model did not write an answer from these sources (it replied with only source numbers, "
    "headings or names). Try rephrasing the question, or read the sources with rag search."
)


@dataclass(frozen=True)
class AskSettings:
    """The ask-time settings, defaulting to the configuration's own defaults."""

    top_k: int = RetrievalConfig.top_k
    sufficiency_floor: float = RetrievalConfig.sufficiency_floor
    relevance_floor: float = RetrievalConfig.relevance_floor
    parent_document: bool = RetrievalConfig.parent_document
    max_tokens: int = GenerationConfig.max_tokens
    temperature: float = GenerationConfig.temperature
    answerability: Thresholds = field(default_factory=Thresholds)  # calibrated (see answerability.py)


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
                location=Location(first.line_start, last.line_end, first.page_start, last.page_end),
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


def _cache_lookup(
    cache: AnswerCache | None,
    question: str,
    chunks: Sequence[Chunk],
    settings: AskSettings,
    trace: TraceRecorder,
) -> tuple[str, Answer | None]:
    if cache is None:
        return "", None
    with trace.stage("answer-cache", len(chunks)) as rec:
        key = cache.key(question, chunks, settings)
        hit = cache.get(key)
        rec.n_out = 0 if hit is None else 1
        rec.detail.update(hit=hit is not None, key=key[:16])
    return key, hit


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
    with trace.stage("abstain", len(candidates)) as rec:
        best = max((c.dense_cosine for c in candidates if c.dense_cosine is not None), default=None)
        abstain = should_abstain([c.dense_cosine for c in candidates], settings.sufficiency_floor)
        rec.n_out = 0 if abstain else len(candidates)
        rec.detail.update(best_cosine=best, floor=settings.sufficiency_floor, abstained=abstain)
    if abstain:
        return Answer(question, ABSTAIN_MESSAGE, True, (), trace.stages)
    with trace.stage("select", len(candidates)) as rec:
        selected = select_candidates(candidates, settings)
        rec.n_out = len(selected)
        rec.detail.update(top_k=settings.top_k, relevance_floor=settings.relevance_floor)
    if not selected:
        return Answer(question, ABSTAIN_MESSAGE, True, (), trace.stages)
    with trace.stage("parent-expansion", len(selected)) as rec:
        chunks = (
            expand_to_parents(selected, table) if settings.parent_document else [c.chunk for c in selected]
        )
        rec.n_out = len(chunks)
        rec.detail["enabled"] = settings.parent_document
    with trace.stage("coverage", len(chunks)) as rec:
        verdict = judge_coverage(coverage(question, [c.search_text for c in chunks]), settings.answerability)
        rec.n_out = len(chunks) if verdict.answerable else 0
        rec.detail.update(coverage=round(verdict.value, 3), answerable=verdict.answerable)
    if not verdict.answerable:
        return Answer(question, ABSTAIN_MESSAGE, True, (), trace.stages)
    cache_key, hit = _cache_lookup(cache, question, chunks, settings, trace)
    if hit is not None:  # returned before the generator is loaded
        if on_token is not None:
            on_token(hit.text)
        return replace(hit, question=question, trace=trace.stages, citations=flag_sources(hit.citations))
    with trace.stage("load-model", 0) as rec:
        model = generator()
        rec.detail["model"] = model.identity
    with trace.stage("focus", len(chunks)) as rec:
        focused = focus_sources(question, chunks)  # best source first, only the sentences that bear on it
        rec.n_out = len(focused)
        rec.detail["chars"] = {
            "before": sum(len(c.text) for c in chunks),
            "after": sum(len(c.text) for c in focused),
        }
    with trace.stage("prompt", len(focused)) as rec:
        budget = model.context_size - settings.max_tokens - _PROMPT_OVERHEAD - model.count_tokens(question)
        originals = {c.id: c for c in chunks}
        sources = [
            PromptSource(n, originals[chunk.id], chunk.text)
            for n, chunk in enumerate(fit_to_budget(focused, model.count_tokens, budget), start=1)
        ]
        messages = build_messages(question, sources)
        rec.n_out = len(sources)
        rec.detail["budget_tokens"] = budget
    answer = _answer_with_model(question, model, messages, sources, chunks, settings, trace, on_token)
    if answer.refused:
        return answer  # a refusal depends on the model's judgement of this prompt: not cached
    if cache is not None:
        cache.put(cache_key, answer)
    return answer


def _answer_with_model(
    question: str,
    model: TextGenerator,
    messages: list[dict[str, str]],
    sources: Sequence[PromptSource],
    chunks: Sequence[Chunk],
    settings: AskSettings,
    trace: TraceRecorder,
    on_token: Callable[[str], None] | None,
) -> Answer:
    """The model's judgement of the prompt, then the answer with sources attached to its sentences
    (one stricter retry when the reply was only markers, headings or names)."""
    with trace.stage("model-judgement", len(sources)) as rec:
        judged_answerable = True
        if isinstance(model, ContinuationScorer):
            verdict = judge_refusal(
                model.continuation_probability(messages, REFUSAL_OPENING), settings.answerability
            )
            judged_answerable = verdict.answerable
            rec.detail.update(refusal_probability=round(verdict.value, 4), answerable=verdict.answerable)
    if not judged_answerable:
        return Answer(question, REFUSAL_MESSAGE, False, (), trace.stages, refused=True)
    given = frozenset(content_words(question))
    headings = [c.heading for c in chunks]
    with trace.stage("generate", len(sources)) as rec:
        result = _generate(model, messages, sources, given, headings, settings, on_token, rec.detail)
        rec.n_out = 1
    if not result.shown and not result.refused and result.shape != "prose":
        with trace.stage("generate-strict", len(sources)) as rec:
            rec.detail["first_shape"] = result.shape
            strict = build_messages(question, sources, STRICT_INSTRUCTION)
            result = _generate(model, strict, sources, given, headings, settings, on_token, rec.detail)
            rec.n_out = 1
    with trace.stage("citations", len(sources)) as rec:
        attribution = result.attribution
        rec.n_out = len(attribution.citations)
        rec.detail.update(
            shape=result.shape,
            refused=result.refused,
            verified=attribution.verified,
            unsupported=len(attribution.unsupported_sentences),
            rejected_markers=sum(len(s.rejected) for s in attribution.sentences),
            removed_values=sum(len(s.removed) for s in attribution.sentences),
        )
    if result.refused:
        return Answer(question, REFUSAL_MESSAGE, False, (), trace.stages, refused=True)
    if not result.shown:
        return Answer(question, NO_ANSWER_MESSAGE, False, (), trace.stages, refused=True)
    return Answer(
        question,
        attribution.text,
        False,
        attribution.citations,
        trace.stages,
        unsupported_sentences=attribution.unsupported_sentences,
    )


def _generate(
    model: TextGenerator,
    messages: list[dict[str, str]],
    sources: Sequence[PromptSource],
    given: frozenset[str],
    headings: Sequence[str],
    settings: AskSettings,
    on_token: Callable[[str], None] | None,
    detail: dict[str, object],
) -> StreamResult:
    stream = AttributedStream(sources, given=given, headings=headings, emit=on_token)
    began = time.perf_counter()
    for piece in model.stream(messages, max_tokens=settings.max_tokens, temperature=settings.temperature):
        if "first_token_ms" not in detail:
            # Prompt prefill plus one decoded token: the model's own share of time to first token.
            detail["first_token_ms"] = round((time.perf_counter() - began) * 1000, 1)
        stream.feed(piece)
    result = stream.finish()
    detail["chars"] = len(result.raw)
    return result
