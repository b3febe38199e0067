"""The answer metrics against hand-computed examples of the official SQuAD v2 definitions."""

from __future__ import annotations

import pytest

from raggity.evaluation.answer_metrics import (
    best_f1,
    contains_answer,
    is_marker_only,
    normalize_answer,
    strip_markers,
    token_f1,
)


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        # lower -> drop punctuation (the hyphen joins the words) -> drop "the" -> squeeze spaces
        ("The  Norman-Conquest, of 1066!", "normanconquest of 1066"),
        ("An apple a day", "apple day"),
        ("Theory and anathema", "theory and anathema"),  # articles only as whole words
        ("café—bar", "café—bar"),  # the em dash is not ASCII punctuation, so it stays, as in the script
        ("  \t\n", ""),
        ("[1] Paris.", "1 paris"),
    ],
)
def test_normalize_answer(text: str, normalised: str) -> None:
    assert normalize_answer(text) == normalised


def test_token_f1_by_hand() -> None:
    # prediction tokens: norman conquest of england (4); gold: norman conquest (2); 2 shared
    # precision 2/4, recall 2/2: F1 = 2 * 0.5 * 1 / 1.5 = 2/3
    assert token_f1("the Norman conquest of England", "Norman conquest") == pytest.approx(2 / 3)
    # repeated tokens count once per occurrence on both sides: min(2, 1) = 1 shared; P 1/2, R 1
    assert token_f1("Paris paris", "Paris") == pytest.approx(2 / 3)
    assert token_f1("in 1066", "1066") == pytest.approx(2 / 3)
    assert token_f1("Normandy", "Norway") == 0.0
    assert token_f1("The Normans.", "normans") == 1.0


def test_token_f1_empty_sides_follow_the_script() -> None:
    assert token_f1("", "") == 1.0
    assert token_f1("the", "") == 1.0  # both normalise to no tokens
    assert token_f1("the", "France") == 0.0
    assert token_f1("France", "") == 0.0


def test_best_f1_takes_the_best_gold() -> None:
    golds = ["Norway", "Denmark, Iceland and Norway"]
    # against "Norway" alone: P 1/4, R 1: F1 = 0.4; against the second: exact
    assert token_f1("Denmark, Iceland and Norway", "Norway") == pytest.approx(0.4)
    assert best_f1("Denmark, Iceland and Norway", golds) == 1.0
    # "norway and sweden" (3 tokens) vs "norway": P 1/3, R 1 -> 0.5;
    # vs "denmark iceland and norway": shared {and, norway}, P 2/3, R 2/4 -> 2 * (1/3) / (7/6) = 4/7
    assert best_f1("Norway and Sweden", golds) == pytest.approx(4 / 7)


def test_best_f1_without_gold_answers_rewards_only_silence() -> None:
    assert best_f1("", []) == 1.0
    assert best_f1("Rollo", []) == 0.0


def test_contains_answer_matches_whole_tokens_in_order() -> None:
    assert contains_answer("The Normans came from Normandy, in France.", ["normandy"])
    assert contains_answer("It was the 10th and 11th centuries.", ["10th and 11th centuries"])
    assert contains_answer("Rollo", ["Charles III", "Rollo"])
    assert not contains_answer("In 1066.", ["1"])  # "1" is inside "1066", not a token of it
    assert not contains_answer("conquest Norman", ["Norman conquest"])  # out of order
    assert not contains_answer("the", ["the"])  # a gold answer that normalises to nothing is never found
    assert not contains_answer("anything", [])


def test_strip_markers() -> None:
    assert strip_markers("Paris [1][2]. Rome [10].") == "Paris   . Rome  ."
    assert strip_markers("a list [x] stays") == "a list [x] stays"


@pytest.mark.parametrize(
    ("text", "marker_only"),
    [
        ("[1]", True),
        ("[1] [2] [3] [4] [5]", True),
        ("[1], [2].", True),
        ("", True),
        ("It is [3].", True),  # "it" and "is" are function words: nothing is said
        ("Paris [1].", False),
        ("1066", False),
        ("[1] Edward Said [2] Ronald Robinson", False),  # a list of names says something, if not an answer
    ],
)
def test_is_marker_only(text: str, marker_only: bool) -> None:
    assert is_marker_only(text) is marker_only
