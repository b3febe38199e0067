"""The passages a decline shows: best first, one per place, each with its line closest to the question."""

from __future__ import annotations

from raggity.core.types import Candidate, Chunk, Location
from raggity.pipeline.answer.closest import SNIPPET_CHARS, closest_passages


def candidate(source: str, text: str, line: int, heading: str = "") -> Candidate:
    return Candidate(
        Chunk(f"{source}:{line}", source, text, heading, Location(line, line + 2), "p", 0, 10), 0.5
    )


def test_each_passage_shows_the_sentence_sharing_most_words_with_the_question() -> None:
    text = "Backups run nightly.\n\nThe restic password is kept in the vault. Rotate it yearly."
    [passage] = closest_passages(
        "Where is the restic password kept?", [candidate("/n/backups.md", text, 3, "Backups")]
    )

    assert passage.snippet == "The restic password is kept in the vault."
    assert (passage.source, str(passage.location), passage.heading) == (
        "/n/backups.md",
        "lines 3-5",
        "Backups",
    )


def test_best_three_in_rank_order_one_per_place() -> None:
    ranked = [
        candidate("/a.md", "alpha one", 1),
        candidate("/a.md", "alpha one again", 1),  # the same place: shown once
        candidate("/b.md", "beta", 1),
        candidate("/c.md", "gamma", 1),
        candidate("/d.md", "delta", 1),
    ]

    assert [p.source for p in closest_passages("anything", ranked)] == ["/a.md", "/b.md", "/c.md"]


def test_a_long_line_is_cut_to_one_line_of_bounded_length() -> None:
    text = "word " * 400
    [passage] = closest_passages("word", [candidate("/long.txt", text, 1)])

    assert len(passage.snippet) == SNIPPET_CHARS
    assert passage.snippet.endswith("…")
    assert "\n" not in passage.snippet
