"""Lost-in-the-middle ordering: models attend best to the start and end of a long context."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def lost_in_the_middle(ranked: Sequence[T]) -> list[T]:
    """Best items at both ends, weakest in the middle: ranks 1,3,5,... then ...,6,4,2."""
    front = list(ranked[0::2])
    back = list(ranked[1::2])
    return front + back[::-1]
