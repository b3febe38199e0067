"""The sources printed under an answer: the cited ones only, with what each says in other words."""

from __future__ import annotations

import io

from rich.console import Console

from raggity.api import Answer, Citation
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


def test_a_verified_answer_lists_only_its_citations() -> None:
    answer = Answer("q", "Io is volcanically active [1].", False, READ[:1], (), sources_read=READ)

    text = printed(answer)

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
