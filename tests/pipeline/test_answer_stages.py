"""The answer stages on plain values: each takes its inputs as parameters and returns `Staged`, so
it can be run here without an index or a model (the whole story runs in tests/e2e/test_ask.py)."""

from __future__ import annotations

from collections.abc import Sequence

from raggity.core.types import Answer, Candidate, Chunk, Citation, Location, Passage
from raggity.pipeline.answer.budget import fit_to_budget
from raggity.pipeline.answer.settings import AskSettings
from raggity.pipeline.answer.stages import (
    UNSUPPORTED_MESSAGE,
    abstain_stage,
    parents_stage,
    select_stage,
    support_stage,
)


def chunk(name: str, text: str = "some text", parent: str = "p") -> Chunk:
    return Chunk(name, f"/n/{name}.md", text, "", Location(1, 2), parent, 0, 10)


def candidate(name: str, cosine: float | None, score: float = 0.5) -> Candidate:
    return Candidate(chunk(name), score, dense_cosine=cosine)


def words(text: str) -> int:
    return len(text.split())


def test_abstain_passes_nothing_when_the_best_cosine_is_below_the_floor() -> None:
    settings = AskSettings(sufficiency_floor=0.4)
    below = [candidate("a", 0.39), candidate("b", None)]
    above = [candidate("a", 0.2), candidate("b", 0.41)]

    low, high = abstain_stage(below, settings), abstain_stage(above, settings)

    assert (low.value, low.detail["abstained"], low.detail["best_cosine"]) == ([], True, 0.39)
    assert ([c.chunk.id for c in high.value], high.detail["abstained"]) == (["a", "b"], False)


def test_select_keeps_at_most_top_k_and_says_its_settings() -> None:
    ranked = [candidate(name, 0.6, score) for name, score in [("a", 0.9), ("b", 0.8), ("c", 0.7)]]

    staged = select_stage(ranked, AskSettings(top_k=2, relevance_floor=0.0))

    assert [c.chunk.id for c in staged.value] == ["a", "b"]
    assert (staged.n_out, staged.detail["top_k"]) == (2, 2)


def test_without_parent_documents_the_hits_are_the_sources_and_no_table_is_read() -> None:
    class NoTable:
        """Stands in for the index table: reading it here would be the bug."""

        def fetch_by_parent(self, parent_ids: Sequence[str]) -> list[Chunk]:
            raise AssertionError("parent passages read with parent_document off")

    staged = parents_stage([candidate("a", 0.6), candidate("b", 0.6)], NoTable(), parent_document=False)

    assert [c.id for c in staged.value] == ["a", "b"]
    assert staged.detail == {"enabled": False}


def test_an_answer_no_source_supports_is_declined_with_the_reply_kept_aside() -> None:
    closest = (Passage("/n/a.md", Location(1, 2), "", "a line"),)
    unsupported = Citation(1, "/n/a.md", Location(1, 2), "text", supported=False)
    supported = Citation(1, "/n/a.md", Location(1, 2), "text", supported=True)
    reply = Answer("q?", "It is blue [1].", False, (unsupported,), ())

    declined = support_stage(reply, closest)
    kept = support_stage(Answer("q?", "It is blue [1].", False, (supported,), ()), closest)

    assert declined.value.refused
    assert declined.value.text == UNSUPPORTED_MESSAGE
    assert (declined.value.unsupported_reply, declined.value.closest, declined.value.citations) == (
        "It is blue [1].",
        closest,
        (),
    )
    assert kept.value.text == "It is blue [1]."
    assert not kept.value.refused


def test_the_budget_keeps_sources_in_rank_order_while_they_fit_and_cuts_a_first_that_does_not() -> None:
    # Each source costs its words plus 24 for its wrapper.
    ranked = [chunk("a", "one two three"), chunk("b", "four " * 40), chunk("c", "five six")]

    kept = fit_to_budget(ranked, words, budget=60)
    [cut] = fit_to_budget([chunk("a", "word " * 100)], words, budget=74)

    assert [c.id for c in kept] == ["a", "c"]  # b (64) does not fit beside a (27); c (26) does
    assert len(cut.text) == 201  # (74 - 24) / (100 + 24) of its 500 characters, rounded down
