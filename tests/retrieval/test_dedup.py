"""Near-duplicate removal: threshold semantics, which row of a pair survives, and chains."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from raggity.retrieval.dedup import dedup_indices, near_duplicate_mask


def _unit(degrees: float) -> list[float]:
    """A 2-D unit vector at `degrees`: the cosine of two such vectors is cos(angle between them)."""
    radians = math.radians(degrees)
    return [math.cos(radians), math.sin(radians)]


def _matrix(*rows: list[float]) -> npt.NDArray[np.float32]:
    return np.asarray(rows, dtype=np.float32)


# [1, 0] . [0.5, 0.8660254] = 0.5 exactly (0.5 * 1 + 0.866 * 0).
_HALF = _matrix([1.0, 0.0], [0.5, math.sqrt(3) / 2])


def test_cosine_equal_to_threshold_is_dropped() -> None:
    assert near_duplicate_mask(_HALF, 0.5) == [True, False]
    assert dedup_indices(_HALF, 0.5) == [0]


def test_cosine_below_threshold_is_kept() -> None:
    assert near_duplicate_mask(_HALF, 0.501) == [True, True]
    assert dedup_indices(_HALF, 0.501) == [0, 1]


def test_orthogonal_rows_are_kept_at_any_positive_threshold() -> None:
    assert dedup_indices(_matrix([1.0, 0.0], [0.0, 1.0]), 0.01) == [0, 1]


def test_first_of_a_duplicate_pair_is_kept() -> None:
    # Row 1 and row 2 are identical; row 0 is orthogonal to both.
    rows = _matrix([0.0, 1.0], [1.0, 0.0], [1.0, 0.0])

    assert near_duplicate_mask(rows, 0.9) == [True, True, False]
    assert dedup_indices(rows, 0.9) == [0, 1]


def test_chain_compares_only_with_kept_rows() -> None:
    # A at 0 deg, B at 30 deg, C at 60 deg:
    # cos(A, B) = cos 30 = 0.866 >= 0.8 -> B is dropped (A is kept and better-ranked)
    # cos(B, C) = cos 30 = 0.866, but B was dropped, so it does not count
    # cos(A, C) = cos 60 = 0.5 < 0.8   -> C is kept
    rows = _matrix(_unit(0), _unit(30), _unit(60))

    assert near_duplicate_mask(rows, 0.8) == [True, False, True]
    assert dedup_indices(rows, 0.8) == [0, 2]


def test_chain_with_lower_threshold_drops_both() -> None:
    # Same rows; cos(A, C) = 0.5 >= 0.4, so C is now a duplicate of A.
    rows = _matrix(_unit(0), _unit(30), _unit(60))

    assert dedup_indices(rows, 0.4) == [0]


def test_dedup_indices_accepts_a_sequence_of_rows() -> None:
    rows = [_unit(0), _unit(90), _unit(1)]  # cos(0 deg, 1 deg) = 0.99985

    assert dedup_indices(rows, 0.99) == [0, 1]


def test_empty_input() -> None:
    assert dedup_indices([], 0.5) == []
    assert near_duplicate_mask(np.zeros((0, 3), dtype=np.float32), 0.5) == []
