"""Groups texts into model calls by length, so that padding (compute spent on nothing) stays small."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class BatchLimits:
    """At most `rows` texts per call, and at most `tokens` in its padded [rows, width] input.

    The token budget bounds a call's working memory: attention holds rows x heads x width^2 floats,
    so a fixed row count at the longest width is what made resident memory peak.
    """

    rows: int
    tokens: int

    def __post_init__(self) -> None:
        if self.rows < 1 or self.tokens < 1:
            raise ValueError(f"batch limits must be positive, got {self}")


def plan_batches(lengths: Sequence[int], limits: BatchLimits) -> list[list[int]]:
    """Indices of `lengths` in batches, shortest texts first; every index appears exactly once.

    A batch is padded to its longest text, so neighbours in length order share a batch. A text
    longer than the token budget on its own still gets a batch of one.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        # Sorted ascending, so this text sets the batch's padded width.
        width = lengths[index]
        if current and (len(current) >= limits.rows or (len(current) + 1) * width > limits.tokens):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches
