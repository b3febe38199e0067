"""answer_shape: replies that are only markers, headings or names are not answers; prose is."""

from __future__ import annotations

import pytest

from raggity.pipeline.answer.citations import claim_words
from raggity.pipeline.answer.shape import answer_shape, is_answer, offers_alternatives


@pytest.mark.parametrize("reply", ["[1]", "[1] [2]", "[1] [2] [3] [4] [5]", " [1]. [2]\n"])
def test_markers_only(reply: str) -> None:
    assert answer_shape(reply) == "markers_only"
    assert not is_answer(answer_shape(reply))


def test_empty() -> None:
    assert answer_shape("  \n") == "empty"


@pytest.mark.parametrize(
    "reply",
    [
        "[1] Edward Said [2] Ronald Robinson [3] John Gallagher",
        "- Edward Said\n- Ronald Robinson",
        "1. The Normans\n2. Norman Conquest\n3. Rollo",
    ],
)
def test_lists_of_names(reply: str) -> None:
    assert answer_shape(reply) == "name_list"


def test_headings_and_repeated_titles() -> None:
    assert answer_shape("## Installation\n## Usage") == "headings"
    assert answer_shape("Built-in Exceptions\nBuilt-in Exceptions\nBuilt-in Exceptions") == "headings"
    assert answer_shape("[1] Installation", headings=["Guide > Installation"]) == "headings"


@pytest.mark.parametrize(
    "reply",
    [
        "France.",
        "Normandy is in France [1].",
        "Edward Said [1] and Ronald Robinson [2] wrote about imperialism.",
        "John, Paul, George and Ringo.",
        "The Normans were descended from Norse raiders.\nThey settled in Normandy.",
    ],
)
def test_prose_is_an_answer(reply: str) -> None:
    assert answer_shape(reply) == "prose"
    assert is_answer("prose")


SIZE_QUESTION = frozenset(claim_words("Are there any known size limits to SQLite databases?"))


@pytest.mark.parametrize(
    "reply",
    [
        "Yes, there are known size limits to SQLite databases [1].",
        "Yes [1].",
        "No, SQLite databases have no known size limits.",
        "There are size limits to SQLite databases [2].",
    ],
)
def test_a_reply_that_only_says_the_question_back_is_restated(reply: str) -> None:
    assert answer_shape(reply, given=SIZE_QUESTION) == "restated"
    assert not is_answer("restated")


@pytest.mark.parametrize(
    "reply",
    [
        "Yes: a database holds at most 281 TB [1].",
        "The largest possible database is about 281 terabytes.",
        "SQLite databases are limited by the page size and the page count.",
    ],
)
def test_a_reply_that_adds_the_fact_is_prose(reply: str) -> None:
    assert answer_shape(reply, given=SIZE_QUESTION) == "prose"


def test_naming_one_of_the_questions_alternatives_answers_it() -> None:
    question = "Which is older, the Louvre or the Prado?"
    reply = "The Louvre is older [1]."
    assert offers_alternatives(question)
    assert not offers_alternatives("What is the capital of Oregon?")  # "or" only inside a word
    assert answer_shape(reply, given=frozenset(claim_words(question))) == "restated"
    assert answer_shape(reply, given=frozenset()) == "prose"  # what stages.py passes for such a question
