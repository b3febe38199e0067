"""answer_shape: replies that are only markers, headings or names are not answers; prose is."""

from __future__ import annotations

import pytest

from raggity.pipeline.answer.shape import answer_shape, is_answer


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
