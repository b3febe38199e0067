"""The answer stages, in the order answerer.py runs them: each a plain function of explicit
parameters that returns its result wrapped in `Staged` (what the trace records of it).

Before the model: abstain, select, parent-expansion, coverage, answer-cache, load-model, focus,
prompt. With the model: model-judgement, generate (generate-strict once more when the reply was not
an answer), citations. After the answer: meaning, support, freshness. A new stage is one more
function here and one more `trace.run` line in answerer.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from raggity.core.protocols import EmbedTexts, Generator
from raggity.core.trace import Staged, passed
from raggity.core.types import Answer, Candidate, Chunk, Passage
from raggity.pipeline.answer.answerability import coverage, judge_coverage, judge_refusal, refusal_probability
from raggity.pipeline.answer.budget import fit_to_budget, room_for_sources
from raggity.pipeline.answer.cache import AnswerCache
from raggity.pipeline.answer.citations import claim_words
from raggity.pipeline.answer.focus import focus_sources
from raggity.pipeline.answer.freshness import changed_since_ingest, newer_files
from raggity.pipeline.answer.meaning import attach_by_meaning
from raggity.pipeline.answer.prompt import (
    OFFER_REFUSAL_INSTRUCTION,
    YES_NO_INSTRUCTION,
    PromptSource,
    build_messages,
)
from raggity.pipeline.answer.settings import AskSettings
from raggity.pipeline.answer.shape import words_to_add_to
from raggity.pipeline.answer.stream import AttributedStream, StreamResult
from raggity.retrieval.abstain import should_abstain
from raggity.retrieval.selection import select_candidates
from raggity.store.manifest import Manifest

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


class ParentPassages(Protocol):
    """What parent expansion reads of the index: the chunks under each parent id, in any order
    (store/vector_table.py's VectorTableReader)."""

    def fetch_by_parent(self, parent_ids: Sequence[str]) -> list[Chunk]: ...


@dataclass(frozen=True)
class Prompt:
    sources: list[PromptSource]
    messages: list[dict[str, str]]  # the answer prompt
    # The judgement's two prompts: the same but for their last line.
    refusal_offered: list[dict[str, str]]
    yes_no: list[dict[str, str]]


# Before the model ----------------------------------------------------------------------------------


def abstain_stage(candidates: Sequence[Candidate], settings: AskSettings) -> Staged[list[Candidate]]:
    """Nothing passes when the best cosine with the question is below the sufficiency floor."""
    best = max((c.dense_cosine for c in candidates if c.dense_cosine is not None), default=None)
    abstain = should_abstain([c.dense_cosine for c in candidates], settings.sufficiency_floor)
    kept = [] if abstain else list(candidates)
    return passed(kept, best_cosine=best, floor=settings.sufficiency_floor, abstained=abstain)


def select_stage(candidates: list[Candidate], settings: AskSettings) -> Staged[list[Candidate]]:
    """The best `top_k` candidates above the relevance floor (retrieval/selection.py)."""
    selected = select_candidates(candidates, settings.top_k, settings.relevance_floor)
    return passed(selected, top_k=settings.top_k, relevance_floor=settings.relevance_floor)


def parents_stage(
    selected: Sequence[Candidate], table: ParentPassages, parent_document: bool
) -> Staged[list[Chunk]]:
    """The sources to read: each hit's parent passage, or the hits themselves when that is off."""
    chunks = expand_to_parents(selected, table) if parent_document else [c.chunk for c in selected]
    return Staged(chunks, len(chunks), {"enabled": parent_document})


def expand_to_parents(selected: Sequence[Candidate], table: ParentPassages) -> list[Chunk]:
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


def coverage_stage(question: str, chunks: Sequence[Chunk], settings: AskSettings) -> Staged[bool]:
    """Whether some source holds enough of the question's content words to be worth asking about."""
    verdict = judge_coverage(coverage(question, [c.search_text for c in chunks]), settings.answerability)
    detail = {"coverage": round(verdict.value, 3), "answerable": verdict.answerable}
    return Staged(verdict.answerable, len(chunks) if verdict.answerable else 0, detail)


def cache_stage(cache: AnswerCache, key: str) -> Staged[Answer | None]:
    """The answer stored for these sources and settings, if any (before the generator is loaded)."""
    hit = cache.get(key)
    return Staged(hit, 0 if hit is None else 1, {"hit": hit is not None, "key": key[:16]})


def load_model_stage(generator: Callable[[], Generator]) -> Staged[Generator]:
    """The generator, loaded on first use: a question declined before this point never loads it."""
    model = generator()
    return Staged(model, 0, {"model": model.identity})


def focus_stage(question: str, chunks: Sequence[Chunk]) -> Staged[list[Chunk]]:
    """Best source first, each cut to the sentences that bear on the question."""
    focused = focus_sources(question, chunks)
    before, after = sum(len(c.text) for c in chunks), sum(len(c.text) for c in focused)
    return Staged(focused, len(focused), {"chars": {"before": before, "after": after}})


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


# With the model -----------------------------------------------------------------------------------


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
    the first answer text shown, every stage before included. `first_shape`: the shape of the reply
    this one retries, for the trace."""
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
    """What the attributing stream made of the reply, for the trace: its shape, and how many
    sentences no source supports, markers were rejected and values removed."""
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


# After the answer ----------------------------------------------------------------------------------


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


def freshness_stage(answer: Answer, manifest: Manifest, root: str | None = None) -> Staged[Answer]:
    """Whether the files behind the answer are still what was indexed; a decline also counts the
    files written since the last ingest, which may hold what was asked. `root`: where files named
    relative to [index] root are on this checkout."""
    read = [c.source for c in (*answer.citations, *answer.sources_read)] + [p.source for p in answer.closest]
    changed = changed_since_ingest(read, manifest, root)
    newer = newer_files(manifest, root) if answer.declined else 0
    checked = replace(answer, changed_sources=changed, newer_files=newer)
    return Staged(checked, 1, {"checked": len(set(read)), "changed": len(changed), "newer_files": newer})
