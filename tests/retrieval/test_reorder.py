"""Lost-in-the-middle ordering: best-ranked items at both ends of the context."""

from __future__ import annotations

import pytest

from raggity.retrieval.reorder import lost_in_the_middle


@pytest.mark.parametrize(
    ("ranked", "expected"),
    [
        ([], []),
        ([1], [1]),
        ([1, 2], [1, 2]),
        ([1, 2, 3], [1, 3, 2]),
        ([1, 2, 3, 4, 5], [1, 3, 5, 4, 2]),
        ([1, 2, 3, 4, 5, 6], [1, 3, 5, 6, 4, 2]),
    ],
)
def test_best_at_both_ends(ranked: list[int], expected: list[int]) -> None:
    assert lost_in_the_middle(ranked) == expected


def test_works_on_tuples_and_returns_a_new_list() -> None:
    ranked = ("first", "second", "third", "fourth")

    result = lost_in_the_middle(ranked)

    assert result == ["first", "third", "fourth", "second"]
    assert ranked == ("first", "second", "third", "fourth")
