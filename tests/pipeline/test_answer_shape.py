"""answer_shape: replies that are only markers, headings or names are not answers; prose is."""

from __future__ import annotations

import pytest

from raggity.pipeline.answer.shape import answer_shape, is_answer, names, words_to_add_to


@pytest.mark.parametrize("reply", ["[1]", "[1] [2]", "[1] [2] [3] [4] [5]", " [1]. [2]\n", "[1]: -- [2]"])
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


SIZE_QUESTION = words_to_add_to("Are there any known size limits to SQLite databases?")


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
    assert answer_shape(reply, asked=SIZE_QUESTION) == "restated"
    assert not is_answer("restated")


@pytest.mark.parametrize(
    "reply",
    [
        "Yes: a database holds at most 281 TB [1].",
        "The largest possible database is about 281 terabytes.",
        "SQLite databases are limited by the page size and the page count.",  # "limited", not "limits"
    ],
)
def test_a_reply_that_adds_the_fact_is_prose(reply: str) -> None:
    assert answer_shape(reply, asked=SIZE_QUESTION) == "prose"


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("How many workers does frobnicator start by default?", "Frobnicator starts 4 workers [1]."),
        ("How many workers does frobnicator start?", "4"),
        ("Which language is SQLite written in?", "SQLite is written in C."),
        ("Which command lists the branches?", "git branch [1]"),
        ("What is the Japanese word for thanks?", "ありがとう"),
    ],
)
def test_a_short_fact_one_character_long_or_in_another_script_adds_to_the_question(
    question: str, reply: str
) -> None:
    assert answer_shape(reply, asked=words_to_add_to(question)) == "prose"


def test_a_question_offering_alternatives_is_answered_in_its_own_words() -> None:
    asked = words_to_add_to("Which is older, the Louvre or the Prado?")

    assert asked == frozenset()
    assert answer_shape("The Louvre is older [1].", asked=asked) == "prose"


# Yes-or-no questions asked of real documentation (httpx's, git's, PostgreSQL's, Scrapy's), each
# with a reply a small model gave or could give that says "yes" or "no" and names nothing the
# question did not, and one that names what in the source does it.
@pytest.mark.parametrize(
    ("question", "restated", "names_it"),
    [
        (
            "Can I use basic authentication with the client?",
            "Yes, you can use basic authentication with the client [1].",
            'Yes, pass auth=("username", "secret") when creating the Client [1].',
        ),
        (
            "Can I use basic authentication with the client?",
            "Yes, the client supports basic authentication [1].",
            "Yes, with `httpx.BasicAuth` [1].",
        ),
        (
            "Does git stash save untracked files?",
            "No, git stash does not save untracked files [1].",
            "Only with -u or --include-untracked: then all untracked files are also stashed [1].",
        ),
        (
            "Are two null values considered duplicates in a unique constraint?",
            "No, two null values are not considered duplicates in a unique constraint [1].",
            "No, by default null values are not considered equal, unless NULLS NOT DISTINCT is given [1].",
        ),
        (
            "Can a spider stop itself?",
            "Yes, a spider can stop itself [1].",
            "Yes, raise the CloseSpider exception from a callback [1].",
        ),
        (
            "Does frobnicator run on Windows?",
            "Yes, frobnicator runs on Windows [1].",
            "Yes, it runs on Linux, macOS and Windows 10 or later [1].",
        ),
    ],
)
def test_a_yes_or_no_reply_must_name_what_does_it(question: str, restated: str, names_it: str) -> None:
    asked = words_to_add_to(question)

    assert answer_shape(restated, asked=asked) == "restated"
    assert answer_shape(names_it, asked=asked) == "prose"


@pytest.mark.parametrize(
    ("reply", "named"),
    [
        ("Use `git stash push` [1].", {"git", "stash", "push"}),
        ("Set max_connections in postgresql.conf.", {"max_connections", "postgresql", "conf"}),
        ("Call engine.close_spider() or raise CloseSpider.", {"engine", "close_spider", "closespider"}),
        ("It holds -32768 to +32767 in 2 bytes.", {"32768", "32767", "2"}),
        ("Yes. Linux is fine, e.g. on a server.", set()),  # a capital that opens a sentence, an abbreviation
        ("Yes, the client supports it.", set()),
    ],
)
def test_names_are_what_a_reply_names_not_its_plain_words(reply: str, named: set[str]) -> None:
    assert names(reply) == named


def test_is_there_asks_for_the_thing_itself() -> None:
    asked = words_to_add_to("Is there an equivalent of C's ?: ternary operator?")

    assert answer_shape("Yes, there is an equivalent of C's ?: operator [1].", asked=asked) == "restated"
    assert answer_shape("Yes: x if cond else y [1].", asked=asked) == "prose"
