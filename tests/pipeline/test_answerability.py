"""Answerability signals and verdicts."""

from __future__ import annotations

import pytest

from raggity.pipeline.answer.answerability import (
    CALIBRATED,
    Thresholds,
    coverage,
    judge_coverage,
    judge_refusal,
    refusal_probability,
    thresholds_for,
)
from raggity.pipeline.answer.prompt import REFUSAL_OPENING
from raggity.testing import ScriptedGenerator
from tests.support import must_not_generate

OFFERED = [{"role": "user", "content": "sources, question, offer"}]
ASKED = [{"role": "user", "content": "sources, question, yes or no?"}]


def Readings(table: dict[tuple[str, str], float]) -> ScriptedGenerator:  # noqa: N802 - reads as the double it builds
    """A generator whose judgement has fixed probabilities per (prompt, continuation); it records
    what was asked in `judged`."""
    return ScriptedGenerator(must_not_generate, lambda messages, text: table[messages[-1]["content"], text])


def test_the_judgement_is_the_mean_of_the_offered_refusal_and_the_share_of_no() -> None:
    scorer = Readings(
        {
            (ASKED[0]["content"], "Yes"): 0.3,
            (ASKED[0]["content"], "No"): 0.1,  # share of No: 0.1 / 0.4 = 0.25
            (OFFERED[0]["content"], REFUSAL_OPENING): 0.8,
        }
    )

    assert refusal_probability(scorer, OFFERED, ASKED) == pytest.approx((0.525, 0.8, 0.25))
    # Each reading once, from its own prompt; the refusal last, for the answer's cache (see there).
    assert [(m[-1]["content"], text) for m, text in scorer.judged] == [
        (ASKED[0]["content"], "Yes"),
        (ASKED[0]["content"], "No"),
        (OFFERED[0]["content"], REFUSAL_OPENING),
    ]


def test_a_model_that_says_neither_yes_nor_no_is_judged_by_the_refusal_alone() -> None:
    scorer = Readings(
        {
            (OFFERED[0]["content"], REFUSAL_OPENING): 0.7,
            (ASKED[0]["content"], "Yes"): 0.0,
            (ASKED[0]["content"], "No"): 0.0,
        }
    )

    assert refusal_probability(scorer, OFFERED, ASKED) == pytest.approx((0.7, 0.7, 0.7))


def test_coverage_is_the_best_single_source_share_of_question_words() -> None:
    # content words: capital, peru -> source 1 has both, source 2 one.
    assert (
        coverage("What is the capital of Peru?", ["Lima is the capital of Peru.", "Peru exports copper."])
        == 1.0
    )
    assert coverage("What is the capital of Peru?", ["Peru exports copper."]) == 0.5
    assert coverage("What is the capital of Peru?", []) == 0.0
    # No English content word: not measurable here, so not declined here.
    assert coverage("Why?", ["anything"]) == 1.0
    assert coverage("What is C?", ["anything"]) == 1.0
    assert coverage("Что такое индекс?", ["anything"]) == 1.0
    # No letter at all: nothing is asked.
    assert coverage("?!?! 42", ["anything"]) == 0.0
    assert coverage("\x1b[2J\x1b]0;T\x07\x1b[31m", ["anything"]) == 0.0


def test_verdicts_name_the_signal_that_declined() -> None:
    thresholds = Thresholds(min_coverage=0.5, max_refusal_probability=0.3)

    assert judge_coverage(0.5, thresholds).answerable
    assert judge_coverage(0.4, thresholds).reason == "coverage"
    assert judge_refusal(0.3, thresholds).answerable
    assert judge_refusal(0.31, thresholds).reason == "model"


def test_the_refusal_ceiling_is_compared_at_the_traces_precision() -> None:
    """Calibration reads probabilities rounded to 4 decimals; 0.14034 is at a ceiling of 0.1403."""
    assert judge_refusal(0.14034, Thresholds(max_refusal_probability=0.1403)).answerable
    assert not judge_refusal(0.14036, Thresholds(max_refusal_probability=0.1403)).answerable


def test_each_packaged_model_has_its_own_calibration_and_others_the_default() -> None:
    assert thresholds_for("qwen2.5-coder-0.5b-instruct") == CALIBRATED["qwen2.5-coder-0.5b-instruct"]
    assert thresholds_for("qwen2.5-coder-0.5b-instruct") != Thresholds()
    # A pulled model, or a GGUF named by model_path (the session passes ""), declines only when the
    # model finds refusing more likely than answering.
    assert thresholds_for("my-pulled-model") == thresholds_for("") == Thresholds()
    assert Thresholds().max_refusal_probability == 0.5
