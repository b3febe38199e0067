"""Which queries to run for a question: query plans, and the decomposing composite retriever.

HyDE, step-back and expansion compose: the question and every generated text are embedded in one
batch and searched as separate ranked lists that HybridRetriever fuses by RRF (HyDE passages are
dense-only). Decomposition replaces them: each sub-question is retrieved on its own and the results
are merged by chunk id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from raggity.core.protocols import EmbedTexts, Retriever, Vector
from raggity.core.trace import Staged, TraceRecorder, passed
from raggity.core.types import Candidate, Query
from raggity.pipeline.search.hybrid import QueryPlan, merged_origins
from raggity.pipeline.search.transforms import Transforms

DECOMPOSE_NOTE = "--decompose overrides hyde, step-back and expand (they were not run)"


@dataclass(frozen=True)
class TransformOptions:
    hyde: bool = False
    step_back: bool = False
    expand: bool = False
    decompose: bool = False

    @property
    def active(self) -> bool:
        return self.hyde or self.step_back or self.expand or self.decompose

    @property
    def conflicting(self) -> bool:
        return self.decompose and (self.hyde or self.step_back or self.expand)


def resolve_options(
    configured: TransformOptions,
    *,
    hyde: bool | None = None,
    step_back: bool | None = None,
    expand: bool | None = None,
    decompose: bool = False,
) -> TransformOptions:
    """Per-call flags over the configured ones; None keeps the configured value."""
    return TransformOptions(
        configured.hyde if hyde is None else hyde,
        configured.step_back if step_back is None else step_back,
        configured.expand if expand is None else expand,
        decompose or configured.decompose,
    )


def plan_queries(
    question: str, options: TransformOptions, transforms: Transforms, trace: TraceRecorder
) -> list[tuple[str, str, bool]]:
    """(label, text, lexical) for the question and each generated query, in a fixed order; a generated
    question that repeats one already planned is dropped (it would only double-count that list)."""
    planned = [("question", question, True)]
    seen = {" ".join(question.lower().split())}

    def new(text: str) -> bool:
        norm = " ".join(text.lower().split())
        fresh = norm not in seen
        seen.add(norm)
        return fresh

    if options.step_back:
        planned += [("step-back", t, True) for t in transforms.step_back(question, trace) if new(t)]
    if options.expand:
        found = [t for t in transforms.expand(question, trace) if new(t)]
        planned += [(f"expand-{i}", t, True) for i, t in enumerate(found, start=1)]
    if options.hyde:
        planned += [("hyde", t, False) for t in transforms.hyde(question, trace)]
    return planned


def embed_queries(embed: EmbedTexts, texts: Sequence[str], trace: TraceRecorder) -> list[Vector]:
    """One embedding batch for all of `texts`, recorded as the "embed" stage."""
    vectors = trace.run("embed", len(texts), lambda: Staged(embed(list(texts)), len(texts)))
    return list(vectors)


def as_given(embed: EmbedTexts | None, trace: TraceRecorder) -> QueryPlan:
    """The plan without transforms: the query itself, embedded unless it already is (or there is no
    embedder: BM25-only search)."""

    def plan(query: Query) -> list[Query]:
        if embed is None or query.vector is not None:
            return [query]
        [vector] = embed_queries(embed, [query.text], trace)
        return [replace(query, vector=vector)]

    return plan


def transformed(
    options: TransformOptions, transforms: Transforms, embed: EmbedTexts | None, trace: TraceRecorder
) -> QueryPlan:
    """The question plus the texts HyDE, step-back and expansion write for it, embedded in one batch
    (HyDE passages are dense-only; without an embedder only lexical queries are kept)."""

    def plan(query: Query) -> list[Query]:
        planned = plan_queries(query.text, options, transforms, trace)
        if embed is None:
            return [Query(text, label, None, lexical) for label, text, lexical in planned if lexical]
        vectors = embed_queries(embed, [text for _, text, _ in planned], trace)
        return [
            Query(text, label, vector, lexical)
            for (label, text, lexical), vector in zip(planned, vectors, strict=True)
        ]

    return plan


class DecomposedRetriever:
    """Composite retriever for multi-part questions: the model splits the question into
    sub-questions (one call), `inner` retrieves each on its own, and the results are merged by chunk
    id (see merge_by_chunk). Scores are `inner`'s."""

    def __init__(
        self, inner: Retriever, transforms: Transforms, embed: EmbedTexts | None, trace: TraceRecorder
    ) -> None:
        self._inner = inner
        self._transforms = transforms
        self._embed = embed
        self._trace = trace

    def retrieve(self, query: Query) -> list[Candidate]:
        subs = self._transforms.decompose(query.text, self._trace)
        vectors: Sequence[Vector | None] = (
            embed_queries(self._embed, subs, self._trace) if self._embed is not None else [None] * len(subs)
        )
        per_sub = [
            self._inner.retrieve(Query(sub, f"sub-{i}", vector))
            for i, (sub, vector) in enumerate(zip(subs, vectors, strict=True), start=1)
        ]
        detail = {
            "sub_questions": {f"sub-{i}": s for i, s in enumerate(subs, start=1)},
            "candidates": {f"sub-{i}": len(r) for i, r in enumerate(per_sub, start=1)},
        }
        return self._trace.run(
            "decompose-merge", sum(len(r) for r in per_sub), lambda: passed(merge_by_chunk(per_sub), **detail)
        )


def merge_by_chunk(lists: Sequence[Sequence[Candidate]]) -> list[Candidate]:
    """One candidate per chunk id (the best-scored copy, with the origins of all copies), ordered by
    the best rank it reached in any list, then by score: each sub-question's top hits come first."""
    best: dict[str, Candidate] = {}
    rank: dict[str, int] = {}
    origins = merged_origins(lists)
    for ranked in lists:
        for position, candidate in enumerate(ranked):
            cid = candidate.chunk.id
            rank[cid] = min(rank.get(cid, position), position)
            if cid not in best or candidate.score > best[cid].score:
                best[cid] = candidate
    merged = [replace(c, origins=origins[cid]) for cid, c in best.items()]
    return sorted(merged, key=lambda c: (rank[c.chunk.id], -c.score))
