"""The sources printed under an answer: cited ones, and for an unverified answer the ones it read."""

from __future__ import annotations

import io

from rich.console import Console

from raggity.api import UNVERIFIED_NOTE, Answer, Citation
from raggity.cli.render import print_sources
from raggity.core.types import Location

READ = (
    Citation(1, "/docs/jupiter.rst", Location(9, 9), "Io is volcanically active."),
    Citation(2, "/docs/moons.rst", Location(3, 4), "Europa hides an ocean."),
)


def printed(answer: Answer) -> str:
    out = io.StringIO()
    print_sources(Console(file=out, width=200, color_system=None), answer)
    return out.getvalue()


def test_an_unverified_answer_lists_the_sources_it_asks_the_reader_to_check() -> None:
    read = tuple(Citation(c.n, c.source, c.location, c.text, supported=False) for c in READ)
    text = printed(
        Answer("q", "Io is made of cheese.", False, (), (), ("Io is made of cheese.",), sources_read=read)
    )

    assert UNVERIFIED_NOTE in text
    lines = text.splitlines()
    start = lines.index("Sources read")
    assert lines[start + 1 : start + 3] == [
        "  [1] /docs/jupiter.rst:line 9",
        "  [2] /docs/moons.rst:lines 3-4",
    ]
    assert "not supported by this source" not in text  # none is: the note already says so


def test_an_unverified_answer_with_a_marker_lists_its_source_once() -> None:
    """A URL is shown next to the source that holds it, though no sentence is supported."""
    cited = Citation(1, "/docs/jupiter.rst", Location(9, 9), "See http://io.example.", supported=False)
    read = (cited, Citation(2, "/docs/moons.rst", Location(3, 4), "Europa hides an ocean."))
    answer = Answer("q", "Io lives at http://io.example [1].", False, (cited,), (), ("x",), sources_read=read)

    text = printed(answer)

    assert UNVERIFIED_NOTE in text
    assert text.count("/docs/jupiter.rst") == 1
    assert "Sources read" in text


def test_a_verified_answer_lists_only_its_citations() -> None:
    answer = Answer("q", "Io is volcanically active [1].", False, READ[:1], (), sources_read=READ)

    text = printed(answer)

    assert UNVERIFIED_NOTE not in text
    assert "Sources read" not in text
    assert "moons.rst" not in text
    assert "  [1] /docs/jupiter.rst:line 9" in text.splitlines()


def test_a_source_attached_by_meaning_is_listed_with_the_sentence_it_says() -> None:
    """No [n] in the text points at it (the sentence was shown before it was attached)."""
    said = "Io has [bold]many[/bold] active volcanoes."
    cited = Citation(1, "/docs/jupiter.rst", Location(9, 9), READ[0].text, paraphrases=(said,))
    answer = Answer("q", said, False, (cited,), (), sources_read=READ)

    lines = printed(answer).splitlines()

    start = lines.index("Sources")
    assert lines[start + 1 : start + 3] == [
        "  [1] /docs/jupiter.rst:line 9",
        f"      says in other words: {said}",  # the model's text as data, never markup
    ]
