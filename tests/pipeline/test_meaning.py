"""Citations by meaning, with the real embedder: a sentence said in other words gets its source."""

from __future__ import annotations

import pytest

from raggity.config.schema import Config
from raggity.core.protocols import Embedder
from raggity.core.types import Answer, Citation, Location
from raggity.pipeline.answer.meaning import MEANING_THRESHOLD, attach_by_meaning, closest_sources
from raggity.pipeline.model_loading import load_embedder
from raggity.testing import RecordingEmbedder

LENS = "The Fresnel lens is polished with chamois leather every morning at seven o'clock."
PARAFFIN = "Paraffin for the lamp arrives by supply boat on the first Monday of each month."
SOURCES = {1: PARAFFIN, 2: f"At dusk the keeper lights the lamp. {LENS}"}
QUESTION = "When is the Fresnel lens polished?"
# Said in other words: 0.6 of its words are LENS's, a cosine of about 0.84 with it.
PARAPHRASE = "Daily at seven in the morning, the Fresnel lens is shined with chamois."


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return load_embedder(Config())


def test_a_sentence_said_in_other_words_gets_the_source_that_says_it(embedder: Embedder) -> None:
    [match] = closest_sources(QUESTION, [PARAPHRASE], SOURCES, embedder.embed)

    assert match.source == 2
    assert match.cosine >= MEANING_THRESHOLD


def test_a_claim_on_the_same_topic_that_no_source_makes_gets_none(embedder: Embedder) -> None:
    [match] = closest_sources(
        QUESTION, ["The Fresnel lens is polished by the district inspector."], SOURCES, embedder.embed
    )

    assert match.source == 0
    assert match.cosine < MEANING_THRESHOLD


def test_a_number_the_source_lacks_is_not_said_in_other_words(embedder: Embedder) -> None:
    sentence = "Every day at 10 in the morning, the Fresnel lens is shined with chamois."

    [wrong_hour] = closest_sources(QUESTION, [sentence], SOURCES, embedder.embed)
    [right_hour] = closest_sources(
        QUESTION, [sentence], {**SOURCES, 2: LENS.replace("seven", "10")}, embedder.embed
    )

    assert wrong_hour.source == 0  # close in meaning, but the source says seven, not 10
    assert right_hour.source == 2


def test_only_the_sources_sentences_are_compared_not_the_whole_source(embedder: Embedder) -> None:
    recording = RecordingEmbedder(embedder)

    closest_sources(QUESTION, [PARAPHRASE], SOURCES, recording.embed)

    assert recording.texts == [PARAPHRASE, QUESTION, PARAFFIN, "At dusk the keeper lights the lamp.", LENS]


def test_a_sentence_that_says_the_question_back_is_not_said_by_a_source(embedder: Embedder) -> None:
    """Close to the source's sentence, but no closer than the question itself is."""
    echo = "The Fresnel lens is polished at the time given in the sources."
    vectors = embedder.embed([echo, QUESTION, LENS])
    assert vectors[1] @ vectors[2] > vectors[0] @ vectors[2] >= MEANING_THRESHOLD

    [match] = closest_sources(QUESTION, [echo], SOURCES, embedder.embed)

    assert match.source == 0


def _citation(n: int, text: str, *, supported: bool) -> Citation:
    return Citation(n, f"doc{n}.md", Location(n, n + 1), text, supported=supported)


def test_an_attached_source_is_cited_with_the_sentence_and_the_text_is_unchanged(embedder: Embedder) -> None:
    text = f"The lamp is lit at dusk [2]. {PARAPHRASE} Penguins built the tower."
    answer = Answer(
        QUESTION,
        text,
        False,
        (_citation(2, SOURCES[2], supported=True),),
        (),
        unsupported_sentences=(PARAPHRASE, "Penguins built the tower."),
        sources_read=(_citation(1, PARAFFIN, supported=False), _citation(2, SOURCES[2], supported=True)),
    )

    attached, matches = attach_by_meaning(answer, embedder.embed)

    assert attached.text == text
    assert [(c.n, c.supported, c.paraphrases) for c in attached.citations] == [(2, True, (PARAPHRASE,))]
    assert attached.unsupported_sentences == ("Penguins built the tower.",)
    assert [m.source for m in matches] == [2, 0]
    assert [c.supported for c in attached.sources_read] == [False, True]


def _unverified(sentence: str) -> Answer:
    """An answer of one sentence that no source supports by its words, having read two sources."""
    return Answer(
        QUESTION,
        sentence,
        False,
        (),
        (),
        unsupported_sentences=(sentence,),
        sources_read=(_citation(1, PARAFFIN, supported=False), _citation(2, SOURCES[2], supported=False)),
    )


def test_an_unverified_answer_said_in_other_words_becomes_verified(embedder: Embedder) -> None:
    answer = _unverified(PARAPHRASE)

    attached, _ = attach_by_meaning(answer, embedder.embed)

    assert not answer.verified
    assert attached.verified
    assert [(c.n, c.paraphrases) for c in attached.citations] == [(2, (PARAPHRASE,))]
    assert [c.supported for c in attached.sources_read] == [False, True]
    # The list of sources read says the same of each source as the citations do.
    assert [c.paraphrases for c in attached.sources_read] == [(), (PARAPHRASE,)]


def test_a_paraphrase_is_listed_without_the_markers_it_streamed_with(embedder: Embedder) -> None:
    """Listed under source 2, a "[1]" it streamed with would name another source."""
    attached, _ = attach_by_meaning(_unverified(f"{PARAPHRASE.rstrip('.')} [1]."), embedder.embed)

    assert [(c.n, c.paraphrases) for c in attached.citations] == [(2, (PARAPHRASE,))]
