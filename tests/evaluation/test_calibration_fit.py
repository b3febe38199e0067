"""The calibration's principle on signals whose best pair is known."""

from __future__ import annotations

import pytest

from raggity.evaluation.calibration import Signal, cosine_floors, declined, fit, fit_floors, rate
from raggity.evaluation.calibration_set import GROUPS, load_calibration_set
from raggity.evaluation.calibration_split import in_calibration_split


def judged(*probabilities: float, coverage: float = 1.0, cosine: float = 0.6) -> list[Signal]:
    return [Signal(cosine, coverage, p) for p in probabilities]


def test_the_ceiling_declines_the_most_while_keeping_95_percent_of_answerable() -> None:
    # 20 answerable questions: the one at 0.9 may be declined (5%), the one at 0.7 may not.
    answerable = judged(*([0.1] * 18), 0.7, 0.9)
    impossible = judged(0.2, 0.5, 0.65, 0.8, 0.95)
    fitted = fit({"answerable": answerable, "impossible": impossible}, [0.25])

    # Ceilings are the probabilities seen: 0.7 is the lowest that keeps the 0.7 question.
    assert fitted.max_refusal_probability == 0.7
    assert fitted.min_coverage == 0.0
    assert fitted.declined == {"answerable": 0.05, "impossible": 0.4}


def test_a_coverage_floor_is_chosen_when_it_declines_more_for_the_same_budget() -> None:
    answerable = judged(*([0.1] * 20), coverage=0.8)
    unrelated = judged(0.1, 0.1, 0.1, 0.1, coverage=0.2)
    fitted = fit({"answerable": answerable, "out_of_corpus": unrelated}, [0.0])

    # Any floor above 0.2 and up to 0.8 declines every unrelated question; ties go to the lowest.
    assert fitted.min_coverage == 0.25
    assert fitted.max_refusal_probability == 1.0
    assert fitted.declined == {"answerable": 0.0, "out_of_corpus": 1.0}


def test_the_mean_of_the_groups_to_decline_is_maximised() -> None:
    answerable = judged(*([0.1] * 20))
    # Ceiling 0.3 declines all 4 impossible and 0 of 2 unrelated (mean 0.5); ceiling 0.5 declines
    # 1 of 4 and both unrelated (mean 0.625), but 0.3 declines those too: 0.3 wins on both.
    impossible = judged(0.4, 0.4, 0.4, 0.6)
    unrelated = judged(0.6, 0.6)
    fitted = fit({"answerable": answerable, "impossible": impossible, "out_of_corpus": unrelated}, [0.0])

    assert fitted.max_refusal_probability == 0.1  # the highest ceiling that declines all of them
    assert fitted.declined == {"answerable": 0.0, "impossible": 1.0, "out_of_corpus": 1.0}


def test_one_coverage_floor_fits_the_ceiling_alone() -> None:
    answerable = judged(*([0.1] * 20), coverage=0.3)
    unrelated = judged(0.9, 0.9, coverage=0.1)
    fitted = fit({"answerable": answerable, "out_of_corpus": unrelated}, [0.0], coverage_floors=(0.0,))

    assert fitted.min_coverage == 0.0
    assert fitted.max_refusal_probability == 0.1


def test_a_question_the_model_never_judged_is_declined_only_by_what_declined_it() -> None:
    unjudged = Signal(0.6, 0.2, None)
    assert declined(unjudged, 0.25, 0.3, 1.0)
    assert not declined(unjudged, 0.25, 0.1, 0.0)
    assert declined(Signal(None, 1.0, None), 0.0, 0.0, 1.0)  # nothing retrieved
    assert rate([unjudged, Signal(0.1, 1.0, 0.2)], 0.25, 0.0, 1.0) == 0.5


def test_without_questions_to_decline_nothing_is_fitted() -> None:
    with pytest.raises(ValueError, match="questions to decline"):
        fit({"answerable": judged(0.1)}, [0.25])


def test_the_shipped_set_is_balanced_and_never_asked_by_the_answer_benchmark() -> None:
    shipped = load_calibration_set()
    counts = {g: len(shipped.of_group(g)) for g in GROUPS}

    assert counts == {"answerable": 300, "impossible": 300, "out_of_corpus": 200}
    assert all(in_calibration_split(q.id) for q in shipped.questions)
    assert len(shipped.passages) == 301
    # The first N of each group, still round robin: an interrupted or limited run is balanced.
    limited = shipped.limited(3)
    assert [q.group for q in limited] == list(GROUPS) * 3


def test_a_fixed_coverage_floor_that_declines_answerable_questions_still_fits_a_ceiling() -> None:
    # The model's coverage floor (0.4) declines 2 of 10 answerable questions whatever the ceiling:
    # the budget is then what it declines, and the ceiling declines no answerable question more.
    answerable = [*judged(*([0.2] * 8), coverage=0.9), *judged(0.6, 0.6, coverage=0.1)]
    unrelated = judged(0.5, 0.9, coverage=0.9)
    fitted = fit({"answerable": answerable, "out_of_corpus": unrelated}, [0.25], coverage_floors=(0.4,))

    assert fitted.min_coverage == 0.4
    assert fitted.max_refusal_probability == 0.2
    assert fitted.declined == {"answerable": 0.2, "out_of_corpus": 1.0}


def at(*cosines: float, coverage: float = 1.0) -> list[Signal]:
    return [Signal(c, coverage, 0.5) for c in cosines]


def test_the_cosine_floor_sits_midway_between_the_unrelated_and_the_answerable_questions() -> None:
    answerable = at(0.42, 0.5, 0.6, 0.7)
    unrelated = at(0.1, 0.2, 0.38)
    floors = cosine_floors({"answerable": answerable, "out_of_corpus": unrelated}, 0.25)

    assert floors == [0.25, 0.3801, 0.4201, 0.5001, 0.6001, 0.7001]
    fitted = fit_floors(answerable, unrelated, floors)

    # Every floor from 0.3801 up to 0.42 declines the same: the middle of that gap is kept.
    assert fitted.sufficiency_floor == 0.4
    assert fitted.min_coverage == 0.0  # the cosine floor declines them all: no coverage floor
    assert rate(unrelated, fitted.sufficiency_floor, 0.0, 1.0) == 1.0
    assert rate(answerable, fitted.sufficiency_floor, 0.0, 1.0) == 0.0


def test_the_cosine_floor_declines_no_more_answerable_questions_than_the_budget() -> None:
    # 20 answerable questions: one may be declined (5%), not two; the unrelated ones lie among them.
    answerable = at(0.3, 0.35, *([0.8] * 18))
    unrelated = at(0.31, 0.32, 0.4, 0.5)
    fitted = fit_floors(answerable, unrelated, cosine_floors({"a": answerable, "u": unrelated}, 0.25))

    assert rate(answerable, fitted.sufficiency_floor, fitted.min_coverage, 1.0) == 0.05
    # Above 0.32 (both declined) and up to 0.35, where the second answerable question lies.
    assert 0.32 < fitted.sufficiency_floor <= 0.35


def test_a_coverage_floor_declines_what_the_cosine_floor_cannot() -> None:
    # The unrelated questions are as near by meaning as the answerable ones, and share few words.
    answerable = at(0.5, 0.6, 0.7, coverage=0.8)
    unrelated = at(0.55, 0.65, coverage=0.2)
    fitted = fit_floors(answerable, unrelated, cosine_floors({"a": answerable, "u": unrelated}, 0.25))

    assert fitted.sufficiency_floor == 0.25  # no cosine floor declines one without an answerable one
    assert fitted.min_coverage == 0.25  # the lowest that declines both
