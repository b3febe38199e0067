"""The source budget: focused sources go into the prompt best first while they fit."""

from __future__ import annotations

from raggity.core.types import Chunk, Location
from raggity.pipeline.answer.stages import fit_to_budget


def _chunk(n: int, words: int) -> Chunk:
    return Chunk(f"c{n}", f"doc{n}.html", " ".join(["word"] * words), "", Location(1, 5), f"p{n}", 0, words)


def _words(text: str) -> int:
    return len(text.split())


def test_a_source_that_does_not_fit_whole_comes_in_its_shorter_form() -> None:
    # Each source also costs 24 tokens for its block: 24 + 60, 24 + 60, then 100 left.
    chunks = [_chunk(1, 60), _chunk(2, 60), _chunk(3, 90), _chunk(4, 40)]
    shorter = {"c3": _chunk(3, 30)}

    kept = fit_to_budget(chunks, _words, 268, shorter)

    # The third source's best sentence (30 words) fits where its 90 did not; the fourth no longer does.
    assert [(c.id, _words(c.text)) for c in kept] == [("c1", 60), ("c2", 60), ("c3", 30)]
    # Without a shorter form it is dropped, and a later source that fits whole takes its place.
    assert [c.id for c in fit_to_budget(chunks, _words, 268)] == ["c1", "c2", "c4"]


def test_the_best_source_is_cut_to_fit_when_even_its_shorter_form_does_not() -> None:
    kept = fit_to_budget([_chunk(1, 200)], _words, 124, {"c1": _chunk(1, 150)})

    assert len(kept) == 1
    assert _words(kept[0].text) <= 100
