"""check_citations: markers resolved to sources, unsupported sentences and invalid numbers flagged."""

from __future__ import annotations

from raggity.core.types import Chunk, Citation, Location
from raggity.pipeline.citations import check_citations
from raggity.pipeline.prompt import PromptSource

PARIS = "Paris is the capital of France."  # content words: paris, capital, france
TOWER = "The Eiffel Tower is 330 metres tall."  # content words: eiffel, tower, 330, metr(es), tall


def _source(n: int, text: str) -> PromptSource:
    chunk = Chunk(
        id=f"chunk-{n}",
        source=f"doc{n}.md",
        text=text,
        heading="",
        location=Location(line_start=10 * n, line_end=10 * n + 2),
        parent_id=f"parent-{n}",
        ordinal=0,
        n_tokens=8,
    )
    return PromptSource(n=n, chunk=chunk, text=text)


SOURCES = [_source(1, PARIS), _source(2, TOWER)]


def test_supported_sentence() -> None:
    check = check_citations("Paris is the capital of France [1].", SOURCES)

    assert check.citations == (Citation(1, "doc1.md", Location(10, 12), PARIS, supported=True),)
    assert check.unsupported_sentences == ()
    assert check.invalid_numbers == ()


def test_sentence_citing_the_wrong_source_is_unsupported() -> None:
    # paris, capital, france: none of them is in source 2 -> support 0/3.
    answer = "Paris is the capital of France [2]."

    check = check_citations(answer, SOURCES)

    assert check.citations == (Citation(2, "doc2.md", Location(20, 22), TOWER, supported=False),)
    assert check.unsupported_sentences == (answer,)


def test_half_the_content_words_is_enough() -> None:
    # paris, rome: paris is in source 1 -> 1/2 = 0.5, which meets the 0.5 threshold.
    assert check_citations("Paris and Rome [1].", SOURCES).unsupported_sentences == ()
    # paris, rome, oslo: 1/3 < 0.5.
    unsupported = check_citations("Paris, Rome and Oslo [1].", SOURCES)
    assert unsupported.unsupported_sentences == ("Paris, Rome and Oslo [1].",)
    assert unsupported.citations[0].supported is False


def test_only_the_unsupported_sentence_is_listed() -> None:
    answer = f"{PARIS[:-1]} [1]. The tower sits in Berlin [2]. Eiffel Tower is tall [2]."

    check = check_citations(answer, SOURCES)

    # "The tower sits in Berlin": tower, sit, berlin -> 1/3 in source 2.
    assert check.unsupported_sentences == ("The tower sits in Berlin [2].",)
    # Source 2 is still supported by the third sentence (eiffel, tower, tall -> 3/3).
    assert [(c.n, c.supported) for c in check.citations] == [(1, True), (2, True)]


def test_out_of_range_number_is_reported_not_cited() -> None:
    check = check_citations("Paris is the capital of France [1][7].", SOURCES)

    assert [c.n for c in check.citations] == [1]
    assert check.invalid_numbers == (7,)
    assert check.unsupported_sentences == ()


def test_invalid_numbers_are_sorted_and_unique() -> None:
    check = check_citations("Tides rise [9]. Tides fall [0]. Moons pull [9].", SOURCES)

    assert check.invalid_numbers == (0, 9)
    assert check.citations == ()


def test_citations_are_sorted_by_number() -> None:
    answer = "The Eiffel Tower is 330 metres tall [2]. Paris is the capital of France [1]."

    check = check_citations(answer, SOURCES)

    assert [c.n for c in check.citations] == [1, 2]
    assert [c.source for c in check.citations] == ["doc1.md", "doc2.md"]
    assert all(c.supported for c in check.citations)


def test_several_markers_in_one_sentence_are_checked_separately() -> None:
    # Content words: paris, capital, france, eiffel, tower, 330, metr, tall (8).
    # Source 1 holds 3 of them (3/8 < 0.5); source 2 holds 5 (5/8 >= 0.5).
    answer = "Paris is the capital of France and the Eiffel Tower is 330 metres tall [1][2]."

    check = check_citations(answer, SOURCES)

    assert [(c.n, c.supported) for c in check.citations] == [(1, False), (2, True)]
    assert check.unsupported_sentences == (answer,)


def test_marker_after_the_full_stop_belongs_to_that_sentence() -> None:
    # The system prompt asks for citations after every sentence: "Sentence. [n]".
    right = check_citations(f"{PARIS} [1] {TOWER} [2]", SOURCES)
    assert [(c.n, c.supported) for c in right.citations] == [(1, True), (2, True)]
    assert right.unsupported_sentences == ()

    swapped = check_citations(f"{PARIS} [2] {TOWER} [1]", SOURCES)
    assert [(c.n, c.supported) for c in swapped.citations] == [(1, False), (2, False)]
    assert swapped.unsupported_sentences == (f"{PARIS} [2]", f"{TOWER} [1]")


def test_marker_glued_to_the_full_stop() -> None:
    check = check_citations(f"{PARIS}[2] {TOWER}[2]", SOURCES)

    assert check.unsupported_sentences == (f"{PARIS}[2]",)
    assert [(c.n, c.supported) for c in check.citations] == [(2, True)]


def test_newlines_separate_sentences() -> None:
    check = check_citations(
        "Paris is the capital of France [1]\nEiffel Tower is 330 metres tall [1]", SOURCES
    )

    assert check.unsupported_sentences == ("Eiffel Tower is 330 metres tall [1]",)
    assert [(c.n, c.supported) for c in check.citations] == [(1, True)]


def test_answer_without_markers_cites_nothing() -> None:
    check = check_citations("I do not know.", SOURCES)

    assert check.citations == ()
    assert check.unsupported_sentences == ()
    assert check.invalid_numbers == ()


def test_an_answer_of_bare_markers_is_not_evidence() -> None:
    """A small model once answered "[1] [2][3]": markers with no claim must not pass as supported."""
    sources = [
        _source(1, "The frobnicator needs 2 GB."),
        _source(2, "Bread rises."),
        _source(3, "Moons orbit."),
    ]
    check = check_citations("[1] [2][3]", sources)
    assert [c.supported for c in check.citations] == [False, False, False]
    assert check.unsupported_sentences == ("[1] [2][3]",)
