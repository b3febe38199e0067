"""AttributedStream: what reaches the caller is attributed prose, never a marker-only or refusal reply."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from raggity.core.types import Chunk, Location
from raggity.pipeline.answer.attribution import REMOVED_VALUE
from raggity.pipeline.answer.prompt import REFUSAL_REPLY, PromptSource
from raggity.pipeline.answer.shape import words_to_add_to
from raggity.pipeline.answer.stream import AttributedStream, StreamResult

SOURCES = [
    PromptSource(n, Chunk(f"c{n}", f"doc{n}.md", t, "", Location(n, n), f"p{n}", 0, 8), t)
    for n, t in ((1, "Paris is the capital of France."), (2, "The Eiffel Tower is 330 metres tall."))
]


def run(
    reply: str, headings: tuple[str, ...] = (), asked: frozenset[str] = frozenset()
) -> tuple[list[str], StreamResult]:
    shown, result, _ = run_tracking(reply, headings, asked)
    return shown, result


def run_tracking(
    reply: str, headings: tuple[str, ...] = (), asked: frozenset[str] = frozenset()
) -> tuple[list[str], StreamResult, list[str]]:
    """Also returns what the model had written when each piece was shown."""
    shown: list[str] = []
    written: list[str] = []
    raw = ""

    def emit(text: str) -> None:
        shown.append(text)
        written.append(raw)

    stream = AttributedStream(SOURCES, emit=emit, headings=headings, asked=asked)
    for piece in re.findall(r"\S+\s*", reply):  # word by word, as a model streams
        raw += piece
        stream.feed(piece)
    return shown, stream.finish(), written


def test_prose_streams_word_by_word_and_each_sentence_ends_with_its_sources() -> None:
    shown, result, written = run_tracking(
        "Paris is the capital of France. The Eiffel Tower is 330 metres tall."
    )

    assert "".join(shown) == "Paris is the capital of France [1]. The Eiffel Tower is 330 metres tall [2]."
    assert "".join(shown) == result.attribution.text
    assert result.shown
    # The first words were on screen before the model finished its first sentence.
    assert shown[0] == "Paris is the capital"
    assert "." not in written[0]


def test_a_marker_or_url_is_shown_only_after_attribution_checked_it() -> None:
    shown, result = run("Paris is the capital [2] of France, see https://made.up/paris for more.")

    assert not any("[2]" in piece or "made.up" in piece for piece in shown)
    assert "".join(shown) == result.attribution.text
    assert REMOVED_VALUE in result.attribution.text


def test_the_word_before_a_marker_waits_for_what_the_marker_leaves() -> None:
    # The markers take the spaces before them, so the "," before them ends the sentence, and its
    # sources go before it: shown early, the "," came before "[1]" and the reply was restated.
    shown, result = run("Paris is the capital of France , [1] [1]")

    assert "".join(shown) == result.attribution.text == "Paris is the capital of France [1],"


@pytest.mark.parametrize("reply", ["The growth of the modern city", "## The history of the old town"])
def test_a_reply_that_is_only_a_heading_is_never_shown_even_in_part(reply: str) -> None:
    shown, result = run(reply, headings=("Paris > The growth of the modern city",))

    assert (shown, result.shape, result.shown) == ([], "headings", False)


def test_a_reply_opening_with_names_is_held_until_a_word_reads_as_prose() -> None:
    shown, _, written = run_tracking("Edward Said and Ronald Robinson wrote about it. They disagreed.")

    assert shown[0] == "Edward Said and Ronald Robinson wrote"
    assert written[0] == "Edward Said and Ronald Robinson wrote about "


def test_words_shown_early_stay_when_the_same_word_is_later_redacted() -> None:
    shown, result = run("The blue door is in Paris, the capital of France, and the password is blue.")

    assert shown[0].startswith("The blue door")
    assert "".join(shown) == result.attribution.text
    assert result.attribution.text.endswith(f"the password is {REMOVED_VALUE} [1].")


def test_a_marker_written_after_the_full_stop_in_pieces_is_shown_once() -> None:
    pieces = ["Paris", " is", " the", " capital", " of", " France", ".", " [", "1", "]", " The", " Eiffel"]
    pieces += [" Tower", " is", " 330", " metres", " tall", "."]
    shown: list[str] = []
    stream = AttributedStream(SOURCES, emit=shown.append)
    for piece in pieces:
        stream.feed(piece)
    result = stream.finish()

    assert "".join(shown) == "Paris is the capital of France [1]. The Eiffel Tower is 330 metres tall [2]."
    assert result.attribution.sentences[0].written == (1,)


@pytest.mark.parametrize(
    ("reply", "headings"),
    [
        ("1. Edward Said\n2. Ronald Robinson", ()),
        ("Mr. Edward Said\nMr. Ronald Robinson", ()),
        ("J. R. R. Tolkien\nC. S. Lewis", ()),
        ("Why Paris? A short history of the city", ("Paris > Why Paris? A short history of the city",)),
    ],
)
def test_numbered_names_and_a_heading_with_a_question_mark_are_never_shown(
    reply: str, headings: tuple[str, ...]
) -> None:
    shown, result = run(reply, headings)

    assert (shown, result.shown) == ([], False)
    assert result.shape in ("name_list", "headings")


FRAGMENTS = [
    "Paris", "is", "the", "capital", "of", "France", "[1]", "[2]", "[7]", "[", ",", ".", "...", "!", "?",
    "the password is hunter2", "password is ab :x9", "see https://made.up/x", "https", "://made.up/y",
    "www", ".example.com", "www.paris.fr", "token = tok_9f8e7d", "sk-3fA9b2C7d8E1f0a6B5c4D3e2F1", "U.S.",
    "75.6", "Eiffel", "Tower", "330", "metres", "\n", "tall.", "tall. [2]", ". [1]", "[1][2]", ".\n[2]",
    "France[1].", "big ,", "Mr.", "1.", "and", "it", "(see", "below)", ";", ":", "  ", "`..", "note::`", "`", " ..", "note::",
    "U.", "S.", "e.g.", "F.", "C.", "It", "Such", "R. R.",
]  # fmt: skip


def _pieces(text: str, rng: random.Random) -> list[str]:
    """As a model might stream `text`: by words, characters, short runs, or token-like cuts."""
    mode = rng.randrange(4)
    if mode == 0:
        return re.findall(r"\S+\s*|\s+", text)
    if mode == 1:
        return list(text)
    if mode == 2:
        cuts = [0]
        while cuts[-1] < len(text):
            cuts.append(cuts[-1] + rng.randint(1, 5))
        return [text[a:b] for a, b in itertools.pairwise(cuts)]
    return re.split(r"(?=[ \n\[\].,:])|(?<=[\[\]])", text)


@pytest.mark.parametrize("seed", range(300))
def test_what_is_shown_is_always_the_attributed_answer(seed: int) -> None:
    """Whatever the reply and however it is cut into pieces, the pieces shown join into the
    attributed text: nothing shown early is later changed by attribution (a value it removes is
    never shown)."""
    rng = random.Random(seed)
    reply = "Paris is the capital " + " ".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(3, 30)))
    shown: list[str] = []
    stream = AttributedStream(SOURCES, emit=shown.append)
    for piece in _pieces(reply, rng):
        stream.feed(piece)
    result = stream.finish()

    assert "".join(shown) == result.attribution.text


def test_a_marker_only_reply_is_never_shown() -> None:
    shown, result = run("[1] [2] [3]")

    assert shown == []
    assert not result.shown
    assert result.shape == "markers_only"
    assert result.attribution.text == ""


def test_a_list_of_names_is_never_shown() -> None:
    shown, result = run("[1] Edward Said [2] Ronald Robinson")

    assert (shown, result.shape, result.shown) == ([], "name_list", False)


CAPITAL_OF = words_to_add_to("What is Paris the capital of?")


def test_the_question_said_back_is_never_shown() -> None:
    shown, result = run("Paris is the capital [1].", asked=CAPITAL_OF)

    assert (shown, result.shape, result.shown) == ([], "restated", False)


def test_an_answer_is_held_only_until_it_adds_a_word_to_the_question() -> None:
    shown, result, written = run_tracking(
        "Paris is the capital of France, and the Eiffel Tower is 330 metres tall.", asked=CAPITAL_OF
    )

    assert result.shape == "prose"
    assert "".join(shown) == result.attribution.text
    # Shown from the first settled word the question did not hold, before the sentence ended.
    assert shown[0].startswith("Paris is the capital of France")
    assert "." not in written[0]


def test_a_first_sentence_that_says_the_question_back_does_not_hold_the_next_one_to_its_end() -> None:
    shown, result, written = run_tracking(
        "Paris is the capital. It is the capital of France and its largest city.", asked=CAPITAL_OF
    )

    assert result.shape == "prose"
    assert "".join(shown) == result.attribution.text
    assert written[0].count(".") == 1  # shown once "France" settled, before the second full stop


@pytest.mark.parametrize(
    "reply",
    [
        f"{REFUSAL_REPLY} I looked everywhere.",
        f'"{REFUSAL_REPLY}"',
        f"[1] {REFUSAL_REPLY}",
        REFUSAL_REPLY.replace(" ", "  ").upper(),
    ],
)
def test_the_refusal_sentence_is_not_shown_as_an_answer(reply: str) -> None:
    shown, result = run(reply)

    assert shown == []
    assert result.refused
    assert not result.shown


def test_an_answer_that_starts_like_the_refusal_but_answers_is_shown() -> None:
    shown, result = run("The sources say Paris is the capital of France.")

    assert not result.refused
    assert "".join(shown) == "The sources say Paris is the capital of France [1]."


def test_a_short_answer_without_a_full_stop_is_shown_at_the_end() -> None:
    shown, result = run("Paris")

    assert shown == ["Paris [1]"]
    assert result.attribution.verified


BASIC_AUTH = words_to_add_to("Can I use basic authentication with the client?")


def test_a_yes_that_names_nothing_is_never_shown() -> None:
    shown, result = run("Yes, you can use basic authentication with the client [1].", asked=BASIC_AUTH)

    assert (shown, result.shape, result.shown) == ([], "restated", False)


def test_a_yes_is_shown_once_it_names_what_does_it() -> None:
    shown, result, written = run_tracking(
        "Yes, give the client an HTTPBasicAuth object, and it sends the credentials.", asked=BASIC_AUTH
    )

    assert result.shape == "prose"
    assert "".join(shown) == result.attribution.text
    # Held until "HTTPBasicAuth" settled (a name the question lacks), not to the sentence's end.
    assert "HTTPBasicAuth" in written[0]
    assert "." not in written[0]
