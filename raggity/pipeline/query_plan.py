"""Retrieval with query transforms: which queries to run, one embedding batch, fusion or merging.

HyDE, step-back and expansion compose: the question and every generated text are embedded in one
batch and searched as separate ranked lists that HybridSearch fuses by RRF (HyDE passages are
dense-only). Decomposition replaces them: each sub-question is retrieved on its own and the results
are merged by chunk id.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from raggity.core.trace import TraceRecorder
from raggity.core.types import Candidate, Query
from raggity.pipeline.transforms import Transforms

Vector = tuple[float, ...]
Embed = Callable[[Sequence[str]], list[Vector]]
Search = Callable[[str, Sequence[Query]], list[Candidate]]

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


def retrieve_planned(
    question: str,
    options: TransformOptions,
    *,
    transforms: Transforms,
    embed: Embed | None,
    search: Search,
    trace: TraceRecorder,
    warn: Callable[[str], None] | None = None,
) -> list[Candidate]:
    """`embed` is None in BM25-only mode; `search` runs HybridSearch over a list of queries."""
    if options.decompose:
        if options.conflicting:
            if warn is not None:
                warn(DECOMPOSE_NOTE)
            with trace.stage("plan", 0) as rec:
                rec.detail["note"] = DECOMPOSE_NOTE
        return _decomposed(question, transforms, embed, search, trace)
    planned = plan_queries(question, options, transforms, trace)
    if embed is None:
        planned = [p for p in planned if p[2]]
    vectors: list[Vector | None] = (
        list(embed([text for _, text, _ in planned])) if embed is not None else [None] * len(planned)
    )
    queries = [
        Query(text, label, vector, lexical)
        for (label, text, lexical), vector in zip(planned, vectors, strict=True)
    ]
    found = search(question, queries)
    _record_contributions(queries, found, trace)
    return found


def _decomposed(
    question: str, transforms: Transforms, embed: Embed | None, search: Search, trace: TraceRecorder
) -> list[Candidate]:
    subs = transforms.decompose(question, trace)
    vectors: list[Vector | None] = list(embed(subs)) if embed is not None else [None] * len(subs)
    per_sub: list[list[Candidate]] = []
    for i, (sub, vector) in enumerate(zip(subs, vectors, strict=True), start=1):
        per_sub.append(search(sub, [Query(sub, f"sub-{i}", vector)]))
    with trace.stage("decompose-merge", sum(len(r) for r in per_sub)) as rec:
        merged = merge_by_chunk(per_sub)
        rec.n_out = len(merged)
        rec.detail["sub_questions"] = {f"sub-{i}": s for i, s in enumerate(subs, start=1)}
        rec.detail["candidates"] = {f"sub-{i}": len(r) for i, r in enumerate(per_sub, start=1)}
    return merged


def merge_by_chunk(lists: Sequence[Sequence[Candidate]]) -> list[Candidate]:
    """One candidate per chunk id (the best-scored copy, with the origins of all copies), ordered by
    the best rank it reached in any list, then by score: each sub-question's top hits come first."""
    best: dict[str, Candidate] = {}
    rank: dict[str, int] = {}
    origins: dict[str, dict[str, None]] = {}
    for ranked in lists:
        for position, candidate in enumerate(ranked):
            cid = candidate.chunk.id
            origins.setdefault(cid, {}).update(dict.fromkeys(candidate.origins))
            rank[cid] = min(rank.get(cid, position), position)
            if cid not in best or candidate.score > best[cid].score:
                best[cid] = candidate
    merged = [replace(c, origins=tuple(origins[cid])) for cid, c in best.items()]
    return sorted(merged, key=lambda c: (rank[c.chunk.id], -c.score))


def _record_contributions(queries: Sequence[Query], found: Sequence[Candidate], trace: TraceRecorder) -> None:
    """Which query produced which text, and how many surviving candidates each list contributed."""
    with trace.stage("query-lists", len(queries)) as rec:
        contributed: dict[str, int] = {}
        only: dict[str, int] = {}
        for candidate in found:
            for name in candidate.origins:
                contributed[name] = contributed.get(name, 0) + 1
            if len(candidate.origins) == 1:
                only[candidate.origins[0]] = only.get(candidate.origins[0], 0) + 1
        rec.n_out = len(found)
        rec.detail["queries"] = {q.label: q.text for q in queries}
        rec.detail["candidates_by_list"] = contributed
        rec.detail["only_from_list"] = only
