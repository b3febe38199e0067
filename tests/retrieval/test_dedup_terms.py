"""Near-duplicates by meaning that differ in a word the question asks for are both kept (#44: in a
folder of templated mail, the message with the asked-for meeting was dropped as a copy of another)."""

from __future__ import annotations

import numpy as np

from raggity.retrieval.dedup import dedup_keeping_terms, words

_SAME = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
_TEXTS = [
    "The meeting 14.1 is in room 141.",
    "The meeting 14.3 is in room 143.",
    "The meeting 14.1 is in room 141!",
]


def test_a_close_row_holding_a_question_word_the_kept_one_lacks_is_kept() -> None:
    terms = words("room meeting 14 3")
    assert dedup_keeping_terms(_SAME, _TEXTS, terms, 0.92) == [0, 1]


def test_a_close_row_adding_no_question_word_is_dropped_as_before() -> None:
    # Without question words, or with words every row holds, it is plain near-duplicate removal.
    assert dedup_keeping_terms(_SAME, _TEXTS, frozenset(), 0.92) == [0]
    assert dedup_keeping_terms(_SAME, _TEXTS, words("which room"), 0.92) == [0]


def test_rows_far_apart_are_all_kept_and_nothing_is_nothing() -> None:
    apart = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    assert dedup_keeping_terms(apart, _TEXTS[:2], frozenset(), 0.92) == [0, 1]
    assert dedup_keeping_terms(np.zeros((0, 2), dtype=np.float32), [], frozenset(), 0.92) == []


def test_a_cosine_just_below_the_threshold_is_no_duplicate() -> None:
    """The threshold is compared in double precision: 0.95 cast to float32 is 0.94999999, which
    would make a row whose cosine is that a duplicate."""
    below = np.float32(0.95)
    rows = np.array([[1.0, 0.0], [below, np.sqrt(np.float32(1) - below * below)]], dtype=np.float32)
    assert float(rows[0] @ rows[1]) < 0.95
    assert dedup_keeping_terms(rows, ["alpha", "alpha"], frozenset(), 0.95) == [0, 1]
    assert dedup_keeping_terms(rows, ["alpha", "alpha"], frozenset(), float(below)) == [0]
