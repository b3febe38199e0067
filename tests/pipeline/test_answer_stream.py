"""AttributedStream: what reaches the caller is attributed prose, never a marker-only or refusal reply."""

from __future__ import annotations

import re

from raggity.core.types import Chunk, Location
from raggity.pipeline.answer_stream import AttributedStream, StreamResult
from raggity.pipeline.prompt import REFUSAL_REPLY, PromptSource

SOURCES = [
    PromptSource(n, Chunk(f"c{n}", f"doc{n}.md", t, "", Location(n, n), f"p{n}", 0, 8), t)
    for n, t in ((1, "Paris is the capital of France."), (2, "The Eiffel Tower is 330 metres tall."))
]


def run(reply: str) -> tuple[list[str], StreamResult]:
    shown: list[str] = []
    stream = AttributedStream(SOURCES, emit=shown.append)
    for piece in re.findall(r"\S+\s*", reply):  # word by word, as a model streams
        stream.feed(piece)
    return shown, stream.finish()


def test_prose_is_streamed_sentence_by_sentence_with_its_sources() -> None:
    shown, result = run("Paris is the capital of France. The Eiffel Tower is 330 metres tall.")

    assert shown == ["Paris is the capital of France [1].", " The Eiffel Tower is 330 metres tall [2]."]
    assert result.shown
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


def test_the_refusal_sentence_is_not_shown_as_an_answer() -> None:
    shown, result = run(f"{REFUSAL_REPLY} I looked everywhere.")

    assert shown == []
    assert result.refused
    assert not result.shown


def test_an_answer_that_starts_like_the_refusal_but_answers_is_shown() -> None:
    shown, result = run("The sources say Paris is the capital of France.")

    assert not result.refused
    assert shown == ["The sources say Paris is the capital of France [1]."]


def test_a_short_answer_without_a_full_stop_is_shown_at_the_end() -> None:
    shown, result = run("Paris")

    assert shown == ["Paris [1]"]
    assert result.attribution.verified
