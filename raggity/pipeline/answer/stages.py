"""The ask pipeline after retrieval: abstain or select, expand, check coverage, focus, prompt, judge,
generate with sources attached, check.

Each step is a plain function returning `Staged`; `answer_from_candidates` runs them in order
through the trace recorder. A new answer stage is one more function and one more `trace.run` line.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from raggity.config.schema import GenerationConfig, RetrievalConfig
from raggity.core.errors import ConfigError, ContextOverflowError
from raggity.core.protocols import EmbedTexts, Generator
from raggity.core.trace import CandidateStage, Staged, TraceRecorder, passed
from raggity.core.types import ABSTAIN_MESSAGE, Answer, Candidate, Chunk, Passage
from raggity.pipeline.answer.answerability import (
    Thresholds,
    coverage,
    judge_coverage,
    judge_refusal,
    refusal_probability,
    thresholds_for,
)
from raggity.pipeline.answer.attribution import flag_sources, sources_read
from raggity.pipeline.answer.cache import AnswerCache
from raggity.pipeline.answer.citations import claim_words
from raggity.pipeline.answer.closest import closest_passages
from raggity.pipeline.answer.focus import focus_sources
from raggity.pipeline.answer.freshness import changed_since_ingest, newer_files
from raggity.pipeline.answer.meaning import attach_by_meaning
from raggity.pipeline.answer.prompt import (
    OFFER_REFUSAL_INSTRUCTION,
    STRICT_INSTRUCTION,
    YES_NO_INSTRUCTION,
    PromptSource,
    build_messages,
)
from raggity.pipeline.answer.shape import words_to_add_to
from raggity.pipeline.answer.stream import AttributedStream, StreamResult
from raggity.retrieval.abstain import should_abstain
from raggity.retrieval.selection import select_candidates
from raggity.store.manifest import Manifest
from raggity.store.vector_table import VectorTableReader

# Tokens kept free for the chat template and the system prompt around the sources.
PROMPT_OVERHEAD = 320
# The least source text a prompt may carry: [generation] source_tokens cannot be set lower either.
_MIN_SOURCE_TOKENS = 64
# A context for one question is sized in these steps. What the estimate leaves out (a source's file
# name longer than its 24-token allowance) is covered by PROMPT_OVERHEAD's unused part (the longest
# instructions, Qwen's chat template and five long-named sources' wrappers took about 120 tokens
# beyond what the source budget charges) and the rounding; past that, llama-cpp-python shortens the
# answer's max_tokens, it does not fail.
_CONTEXT_STEP = 512

# Shown instead of an answer when the model judged that the sources do not answer the question.
REFUSAL_MESSAGE = "The sources found do not answer this question."
# Shown after a reply of which no sentence has a source, by its words or in other words: whatever it
# says, it is not an answer from the documents, and the promise is a cited answer or a plain no.
UNSUPPORTED_MESSAGE = (
    "No indexed source says what this reply says, so it is not an answer from your documents."
)
# Shown when the model wrote only citation markers, headings or names, or said the question back, twice.
NO_ANSWER_MESSAGE = (
    "The model did not write an answer from these sources (it replied with only source numbers, "
    "headings or names, or only said the question back). Try rephrasing the question, or read the "
    "sources with rag search."
)


@dataclass(frozen=True)
class AskSettings:
    """The ask-time settings, defaulting to the configuration's own defaults."""

    top_k: int = RetrievalConfig.top_k
    sufficiency_floor: float = RetrievalConfig.sufficiency_floor
    relevance_floor: float = RetrievalConfig.relevance_floor
    parent_document: bool = RetrievalConfig.parent_document
    max_tokens: int = GenerationConfig.max_tokens
    source_tokens: int = GenerationConfig.source_tokens
    temperature: float = GenerationConfig.temperature
    # Calibrated per model (see answerability.py); the session passes its model's.
    answerability: Thresholds = field(default_factory=lambda: thresholds_for(GenerationConfig.model))

    @property
    def cache_options(self) -> dict[str, object]:
        """The settings that change a generated answer, for the answer cache's key."""
        return {
            "max_tokens": self.max_tokens,
            "source_tokens": self.source_tokens,
            "temperature": self.temperature,
            "parent_document": self.parent_document,
        }


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
        selected = select_candidates(candidates, settings.top_k, settings.relevance_floor)
        return passed(selected, top_k=settings.top_k, relevance_floor=settings.relevance_floor)

    return stage


@dataclass(frozen=True)
class Prompt:
    sources: list[PromptSource]
    messages: list[dict[str, str]]  # the answer prompt
    # The judgement's two prompts: the same but for their last line.
    refusal_offered: list[dict[str, str]]
    yes_no: list[dict[str, str]]


def coverage_stage(question: str, chunks: Sequence[Chunk], settings: AskSettings) -> Staged[bool]:
    """Whether some source holds enough of the question's content words to be worth asking about."""
    verdict = judge_coverage(coverage(question, [c.search_text for c in chunks]), settings.answerability)
    detail = {"coverage": round(verdict.value, 3), "answerable": verdict.answerable}
    return Staged(verdict.answerable, len(chunks) if verdict.answerable else 0, detail)


def focus_stage(question: str, chunks: Sequence[Chunk]) -> Staged[list[Chunk]]:
    """Best source first, each cut to the sentences that bear on the question."""
    focused = focus_sources(question, chunks)
    before, after = sum(len(c.text) for c in chunks), sum(len(c.text) for c in focused)
    return Staged(focused, len(focused), {"chars": {"before": before, "after": after}})


def room_for_sources(question: str, model: Generator, max_tokens: int) -> int:
    """Prompt tokens left for sources beside `question`, the instructions and an answer of
    `max_tokens`. A question that leaves too few is refused here, not by llama.cpp: a pasted log as
    the question ended in an internal error."""
    beside = model.context_size - max_tokens - PROMPT_OVERHEAD
    if beside < _MIN_SOURCE_TOKENS:
        raise ConfigError(
            f"[generation] max_tokens ({max_tokens}) leaves no room for the prompt in a context of "
            f"{model.context_size} tokens",
            f"keep max_tokens at most context_size - {PROMPT_OVERHEAD + _MIN_SOURCE_TOKENS}",
        )
    question_tokens = model.count_tokens(question)
    if beside - question_tokens < _MIN_SOURCE_TOKENS:
        raise ContextOverflowError(
            f"the question is too long for the model: {question_tokens} tokens, where its context of "
            f"{model.context_size} leaves {beside} for the question and its sources",
            "ask a shorter question, or raise [generation] context_size",
        )
    return beside - question_tokens


def context_for_question(question: str, generation: GenerationConfig) -> int:
    """The context that answering `question` needs, at most [generation] context_size: the answer's
    max_tokens, the instructions, the question and the source budget, as `room_for_sources` counts
    them. The question's UTF-8 bytes bound its tokens for a byte-level tokenizer. llama.cpp
    allocates and clears the whole KV cache when the model loads (28 KB a token for the 1.5B model),
    so `rag ask`, which answers one question and then exits, loads a context this size: 1,536 tokens
    for a question of up to 300 bytes with the defaults, 70 MB less resident memory than 4,096."""
    needed = (
        generation.max_tokens
        + PROMPT_OVERHEAD
        + len(question.encode("utf-8", "surrogatepass"))
        + generation.source_tokens
    )
    return min(generation.context_size, -(-needed // _CONTEXT_STEP) * _CONTEXT_STEP)


def build_prompt(
    question: str,
    chunks: Sequence[Chunk],
    focused: Sequence[Chunk],
    model: Generator,
    settings: AskSettings,
) -> Staged[Prompt]:
    """Numbered sources, best first, while they fit the source budget: focused text, cited as the
    chunk it came from. Every prompt token delays the first answer token (about 6 ms each for the
    1.5B model on 2 cores), and past the first few focused sources a small model gains little."""
    budget = min(room_for_sources(question, model, settings.max_tokens), settings.source_tokens)
    originals = {c.id: c for c in chunks}
    sources = [
        PromptSource(n, originals[chunk.id], chunk.text)
        for n, chunk in enumerate(fit_to_budget(focused, model.count_tokens, budget), start=1)
    ]
    prompt = Prompt(
        sources,
        build_messages(question, sources),
        build_messages(question, sources, OFFER_REFUSAL_INSTRUCTION),
        build_messages(question, sources, YES_NO_INSTRUCTION),
    )
    return Staged(prompt, len(sources), {"budget_tokens": budget})


def judge_stage(model: Generator, prompt: Prompt, settings: AskSettings) -> Staged[bool]:
    """The model's own judgement (answerability.refusal_probability). Its prompts differ from the
    answer prompt only in their last line, so the rest stays in the model's cache for the answer
    that follows. This is where the model decides to decline: the answer prompt offers no refusal."""
    probability, opening, asked = refusal_probability(model, prompt.refusal_offered, prompt.yes_no)
    verdict = judge_refusal(probability, settings.answerability)
    detail = {
        "refusal_probability": round(probability, 4),
        "refusal_opening": round(opening, 4),
        "yes_no": round(asked, 4),
        "answerable": verdict.answerable,
    }
    return Staged(verdict.answerable, len(prompt.sources) if verdict.answerable else 0, detail)


def generate_stage(
    model: Generator,
    question: str,
    messages: list[dict[str, str]],
    sources: Sequence[PromptSource],
    settings: AskSettings,
    on_token: Callable[[str], None] | None,
    asked_at: float,
    first_shape: str | None = None,
) -> Staged[StreamResult]:
    """Streams the reply through the attributing stream: words are shown as they come once the reply
    reads as prose, each sentence ends with the sources that support it, and a reply that is not an
    answer (only markers, headings or names) is never shown. Words the question gave count as no
    evidence. `first_text_ms` is the wait a person sees: from `asked_at` (the question's Enter) to
    the first answer text shown, every stage before included."""
    given = frozenset(claim_words(question))
    asked = words_to_add_to(question)
    headings = [s.chunk.heading for s in sources]
    shown: list[float] = []

    def emit(piece: str) -> None:
        if not shown:
            shown.append(time.perf_counter())
        if on_token is not None:
            on_token(piece)

    stream = AttributedStream(sources, given=given, asked=asked, headings=headings, emit=emit)
    detail: dict[str, object] = {} if first_shape is None else {"first_shape": first_shape}
    began = time.perf_counter()
    for piece in model.stream(messages, max_tokens=settings.max_tokens, temperature=settings.temperature):
        if "first_token_ms" not in detail:
            # The judgement evaluated all but the answer prompt's last line: this is that line's
            # prefill and the first decoded token.
            detail["first_token_ms"] = round((time.perf_counter() - began) * 1000, 1)
        stream.feed(piece)
    result = stream.finish()
    detail["chars"] = len(result.raw)
    if shown:
        detail["first_text_ms"] = round((shown[0] - asked_at) * 1000, 1)
    return Staged(result, 1, detail)


def citations_stage(result: StreamResult) -> Staged[StreamResult]:
    attribution = result.attribution
    detail = {
        "shape": result.shape,
        "refused": result.refused,
        "verified": attribution.verified,
        "unsupported": len(attribution.unsupported_sentences),
        "rejected_markers": sum(len(s.rejected) for s in attribution.sentences),
        "removed_values": sum(len(s.removed) for s in attribution.sentences),
    }
    return Staged(result, len(attribution.citations), detail)


def answer_from_candidates(
    question: str,
    candidates: Sequence[Candidate],
    *,
    settings: AskSettings,
    table: VectorTableReader,
    manifest: Manifest,
    generator: Callable[[], Generator],
    trace: TraceRecorder,
    on_token: Callable[[str], None] | None = None,
    cache: AnswerCache | None = None,
    embed: EmbedTexts | None = None,
) -> Answer:
    """The ask pipeline after retrieval, one traced stage at a time. A decline carries the closest
    passages retrieval found, so that it still shows where to read; every answer says which of its
    files changed since they were indexed (`manifest`: the index the candidates came from).
    `embed`: the embedder for citations by meaning (none: words only)."""
    closest = closest_passages(question, candidates)
    answer, cache_key = _decide(
        question, candidates, closest, settings, table, generator, trace, on_token, cache
    )
    # After _decide has returned, so that nothing here holds the generator: `embed` may let it go
    # before it loads the embedder (Models.done_generating), and only sentences no source supports
    # word for word are embedded, so an answer whose every sentence has a source loads nothing. A
    # cached answer was stored after this stage, with the sources it attached.
    if embed is not None and answer.unsupported_sentences and not answer.declined and not answer.cached:
        n = len(answer.unsupported_sentences)
        answer = trace.run("meaning", n, partial(meaning_stage, answer, embed))
    if not answer.declined:
        answer = trace.run("support", len(answer.citations), partial(support_stage, answer, closest))
    if cache is not None and cache_key is not None and not answer.declined:
        cache.put(cache_key, answer)
    checked = trace.run("freshness", 1, partial(freshness_stage, answer, manifest))
    return replace(checked, trace=trace.stages)


def meaning_stage(answer: Answer, embed: EmbedTexts) -> Staged[Answer]:
    """The answer's unsupported sentences that a source it read says in other words get that source
    (meaning.py); the text, already shown, is unchanged."""
    attached, matches = attach_by_meaning(answer, embed)
    n_attached = sum(1 for m in matches if m.source)
    detail = {"attached": n_attached, "cosines": [round(m.cosine, 3) for m in matches]}
    return Staged(attached, n_attached, detail)


def support_stage(answer: Answer, closest: tuple[Passage, ...]) -> Staged[Answer]:
    """An answer none of whose sentences a source supports is declined: the reply is kept aside,
    the closest passages shown as for any decline. Nearly all such answers in the measured samples
    were wrong or answered what the documents do not hold (docs/answers.md, "No source, no answer")."""
    if answer.verified:
        return Staged(answer, len(answer.citations), {"declined": False})
    declined = replace(
        answer,
        text=UNSUPPORTED_MESSAGE,
        refused=True,
        citations=(),
        unsupported_sentences=(),
        closest=closest,
        unsupported_reply=answer.text,
    )
    return Staged(declined, 0, {"declined": True})


def freshness_stage(answer: Answer, manifest: Manifest) -> Staged[Answer]:
    """Whether the files behind the answer are still what was indexed; a decline also counts the
    files written since the last ingest, which may hold what was asked."""
    read = [c.source for c in (*answer.citations, *answer.sources_read)] + [p.source for p in answer.closest]
    changed = changed_since_ingest(read, manifest)
    newer = newer_files(manifest) if answer.declined else 0
    checked = replace(answer, changed_sources=changed, newer_files=newer)
    return Staged(checked, 1, {"checked": len(set(read)), "changed": len(changed), "newer_files": newer})


def _decide(
    question: str,
    candidates: Sequence[Candidate],
    closest: tuple[Passage, ...],
    settings: AskSettings,
    table: VectorTableReader,
    generator: Callable[[], Generator],
    trace: TraceRecorder,
    on_token: Callable[[str], None] | None,
    cache: AnswerCache | None,
) -> tuple[Answer, str | None]:
    """The answer, and the cache key to store it under (None: not to be stored)."""
    kept = trace.run("abstain", len(candidates), partial(abstain_stage(settings), list(candidates)))
    selected = trace.run("select", len(kept), partial(select_stage(settings), kept)) if kept else []
    if not selected:
        return Answer(question, ABSTAIN_MESSAGE, True, (), trace.stages, closest=closest), None
    chunks = trace.run(
        "parent-expansion", len(selected), lambda: _expanded(selected, table, settings.parent_document)
    )
    if not trace.run("coverage", len(chunks), partial(coverage_stage, question, chunks, settings)):
        return Answer(question, ABSTAIN_MESSAGE, True, (), trace.stages, closest=closest), None
    key = None
    if cache is not None:
        key = cache.key(question, chunks, settings.cache_options)
        hit = trace.run("answer-cache", len(chunks), partial(_cached, cache, key))
        if hit is not None:  # returned before the generator is loaded
            if on_token is not None:
                on_token(hit.text)
            restored = replace(
                hit,
                question=question,
                trace=trace.stages,
                citations=flag_sources(hit.citations),
                sources_read=flag_sources(hit.sources_read),
            )
            return restored, None
    model = trace.run("load-model", 0, lambda: _loaded(generator))
    focused = trace.run("focus", len(chunks), partial(focus_stage, question, chunks))
    prompt = trace.run(
        "prompt", len(focused), partial(build_prompt, question, chunks, focused, model, settings)
    )
    answer = _answer_with_model(question, model, prompt, settings, trace, on_token)
    if answer.refused:
        # A refusal depends on the model's judgement of this prompt: it is not cached.
        return replace(answer, closest=closest), None
    return answer, key


def _answer_with_model(
    question: str,
    model: Generator,
    prompt: Prompt,
    settings: AskSettings,
    trace: TraceRecorder,
    on_token: Callable[[str], None] | None,
) -> Answer:
    """The model's judgement of the prompt, then the answer with sources attached to its sentences
    (one stricter retry when the reply was only markers, headings or names, or said the question
    back)."""
    n = len(prompt.sources)
    if not trace.run("model-judgement", n, partial(judge_stage, model, prompt, settings)):
        return _refusal(question, REFUSAL_MESSAGE, prompt, trace)
    result = trace.run(
        "generate",
        n,
        partial(
            generate_stage,
            model,
            question,
            prompt.messages,
            prompt.sources,
            settings,
            on_token,
            trace.started,
        ),
    )
    if not result.shown and not result.refused and result.shape != "prose":
        strict = build_messages(question, prompt.sources, STRICT_INSTRUCTION)
        result = trace.run(
            "generate-strict",
            n,
            partial(
                generate_stage,
                model,
                question,
                strict,
                prompt.sources,
                settings,
                on_token,
                trace.started,
                result.shape,
            ),
        )
    result = trace.run("citations", n, partial(citations_stage, result))
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


def _refusal(question: str, message: str, prompt: Prompt, trace: TraceRecorder) -> Answer:
    read = sources_read(prompt.sources, ())
    return Answer(question, message, False, (), trace.stages, refused=True, sources_read=read)


def _expanded(
    selected: list[Candidate], table: VectorTableReader, parent_document: bool
) -> Staged[list[Chunk]]:
    chunks = expand_to_parents(selected, table) if parent_document else [c.chunk for c in selected]
    return Staged(chunks, len(chunks), {"enabled": parent_document})


def _cached(cache: AnswerCache, key: str) -> Staged[Answer | None]:
    hit = cache.get(key)
    return Staged(hit, 0 if hit is None else 1, {"hit": hit is not None, "key": key[:16]})


def _loaded(generator: Callable[[], Generator]) -> Staged[Generator]:
    model = generator()
    return Staged(model, 0, {"model": model.identity})
