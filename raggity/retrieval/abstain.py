"""Abstention: without evidence close enough to the question, the model must not be asked."""

from __future__ import annotations

from collections.abc import Sequence


def should_abstain(dense_cosines: Sequence[float | None], floor: float) -> bool:
    """True when nothing was retrieved or the best dense cosine is below the sufficiency floor."""
    known = [c for c in dense_cosines if c is not None]
    return not known or max(known) < floor
