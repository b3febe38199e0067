"""Chooses the retriever for one request: hybrid retrieval over the query plan the transforms ask
for, or decomposition wrapped around it."""

from __future__ import annotations

from collections.abc import Callable

from raggity.core.protocols import EmbedTexts, Retriever
from raggity.core.trace import Staged, TraceRecorder
from raggity.pipeline.search.hybrid import QueryPlan
from raggity.pipeline.search.query_plan import (
    DECOMPOSE_NOTE,
    DecomposedRetriever,
    TransformOptions,
    as_given,
    transformed,
)
from raggity.pipeline.search.transforms import Transforms


def request_retriever(
    hybrid: Callable[[QueryPlan], Retriever],
    options: TransformOptions,
    *,
    embed: EmbedTexts | None,
    transforms: Callable[[], Transforms],
    trace: TraceRecorder,
    warn: Callable[[str], None],
) -> Retriever:
    """`hybrid(plan)` is the hybrid retriever running `plan`; `embed` is None for BM25-only search;
    `transforms` is called only when a transform is asked for. Decomposition overrides the other
    transforms, with a warning."""
    if options.decompose:
        if options.conflicting:
            warn(DECOMPOSE_NOTE)
            trace.run("plan", 0, lambda: Staged(None, 0, {"note": DECOMPOSE_NOTE}))
        return DecomposedRetriever(hybrid(as_given(embed, trace)), transforms(), embed, trace)
    if options.active:
        return hybrid(transformed(options, transforms(), embed, trace))
    return hybrid(as_given(embed, trace))
