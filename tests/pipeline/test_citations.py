"""Support of a sentence by a source, and how written [n] markers are judged by that support.

Number checks, question words and thousands separators are in test_attribution.py.
"""

from __future__ import annotations

import pytest

from raggity.core.types import Chunk, Location
from raggity.pipeline.answer.attribution import attribute, attribute_sentence
from raggity.pipeline.answer.citations import SUPPORT_THRESHOLD, claim_words, support
from raggity.pipeline.answer.prompt import PromptSource

PARIS = "Paris is the capital of France."  # content words: paris, capital, france
TOWER = "The Eiffel Tower is 330 metres tall."  # content words: eiffel, tower, 330, metr(es), tall


def _source(n: int, text: str) -> PromptSource:
    chunk = Chunk(f"chunk-{n}", f"doc{n}.md", text, "", Location(10 * n, 10 * n + 2), f"parent-{n}", 0, 8)
    return PromptSource(n, chunk, text)


SOURCES = [_source(1, PARIS), _source(2, TOWER)]


def test_support_is_the_share_of_content_words_the_source_holds() -> None:
    # paris, rome: only paris is in the source.
    assert support("Paris and Rome.", PARIS) == 0.5
    # paris, rome, oslo.
    assert support("Paris, Rome and Oslo.", PARIS) == pytest.approx(1 / 3)


def test_half_the_content_words_is_enough() -> None:
    # The threshold is inclusive: 1/2 keeps the marker, 1/3 rejects it.
    kept = attribute_sentence("Paris and Rome [1].", SOURCES)
    assert (kept.supported, kept.sources, kept.rejected) == (True, (1,), ())

    rejected = attribute_sentence("Paris, Rome and Oslo [1].", SOURCES)
    assert (rejected.supported, rejected.sources, rejected.rejected) == (False, (), (1,))


def test_bare_markers_are_not_evidence() -> None:
    """A small model once answered "[1] [2][3]": markers with no claim must not pass as supported."""
    sources = [
        _source(1, "The frobnicator needs 2 GB."),
        _source(2, "Bread rises."),
        _source(3, "Moons orbit."),
    ]

    assert [support("[1] [2][3]", s.text) for s in sources] == [0.0, 0.0, 0.0]
    result = attribute("[1] [2][3]", sources)
    assert result.citations == ()
    assert not result.verified


def test_each_written_marker_is_checked_against_its_own_source() -> None:
    # paris, france, eiffel, tower: each source holds 2 of 4, so both markers stand.
    both = attribute_sentence("Paris, France: Eiffel Tower [1][2].", SOURCES)
    assert (both.sources, both.rejected) == ((1, 2), ())

    # paris, capital, france, eiffel, tower, 330, metr, tall: source 1 holds 3/8, source 2 holds 5/8.
    one = attribute_sentence(
        "Paris is the capital of France and the Eiffel Tower is 330 metres tall [1][2].", SOURCES
    )
    assert (one.written, one.sources, one.rejected) == ((1, 2), (2,), (1,))
    assert one.text.endswith("tall [2].")


@pytest.mark.parametrize("space", [" ", ""])
def test_a_marker_after_the_full_stop_belongs_to_that_sentence(space: str) -> None:
    # The system prompt asks for "Sentence. [n]"; a model also writes "Sentence.[n]".
    result = attribute(f"{PARIS}{space}[2] {TOWER}{space}[1]", SOURCES)

    assert [s.written for s in result.sentences] == [(2,), (1,)]
    assert [s.rejected for s in result.sentences] == [(2,), (1,)]
    assert [s.sources for s in result.sentences] == [(1,), (2,)]


def test_only_the_unsupported_sentence_is_listed() -> None:
    answer = "Paris is the capital of France [1]. The tower sits in Berlin [2]. Eiffel Tower is tall [2]."

    result = attribute(answer, SOURCES)

    # "The tower sits in Berlin": tower, sit, berlin -> 1/3 in source 2, 0 in source 1.
    assert result.unsupported_sentences == ("The tower sits in Berlin.",)
    # Source 2 is still supported by the third sentence (eiffel, tower, tall -> 3/3).
    assert [(c.n, c.supported) for c in result.citations] == [(1, True), (2, True)]


def test_citations_are_in_source_order_not_answer_order() -> None:
    result = attribute(f"{TOWER} {PARIS}", SOURCES)

    assert result.text == "The Eiffel Tower is 330 metres tall [2]. Paris is the capital of France [1]."
    assert [(c.n, c.source, c.location) for c in result.citations] == [
        (1, "doc1.md", Location(10, 12)),
        (2, "doc2.md", Location(20, 22)),
    ]


def test_a_sentence_that_echoes_the_question_with_a_source_term_is_not_supported() -> None:
    """Asked about an article the index does not hold, the model echoed the question and added a
    term of a source about something else; the added word alone made it look supported."""
    question = "What is the classification of tree decay important to?"
    source = (
        "Radioactivity was discovered in 1896 by Henri Becquerel while working on phosphorescent materials."
    )
    echo = "The classification of tree decay is important to radioactivity."
    given = frozenset(claim_words(question))

    assert support(echo, source, given) < SUPPORT_THRESHOLD
    # The same sentence, asked of a source that holds what it repeats as well: supported.
    on_topic = "The classification of tree decay is important to forestry, which studies radioactivity."
    assert support(echo, on_topic, given) >= SUPPORT_THRESHOLD
