"""Citations by meaning: a sentence that no source supports word for word may still get the source
that says the same in other words.

The word check (citations.support) misses a right answer that paraphrases its source ("runs on
every platform" for "is portable"), and the reader was told to check it themselves. Such a sentence
is compared, with the embedder the search used, with each sentence of each source the model read
(not the whole source: a passage that is about the topic is not a passage that says the claim),
and gets the source whose closest sentence is at least MEANING_THRESHOLD in cosine.

Only sentences with no word support are checked, after the whole reply was shown: each sentence's
sources were attached as it streamed, so one attached here is not marked in the text (that would
change what was already on the terminal) but listed with the sources, next to the sentence it
supports, the same in the terminal and in --json.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from raggity.core.protocols import EmbedTexts
from raggity.core.types import Answer
from raggity.pipeline.answer.citations import numbers_held, without_markers
from raggity.pipeline.answer.focus import document_sentences

# The least cosine between a sentence and a source's sentence for the source to count as saying it.
# Calibrated by bench/meaning_threshold.py on squad2-dev's calibration split with the default
# embedder (all-MiniLM-L6-v2): the lowest cosine at which at most 2% of claims (a question and its
# answer) come as close to a sentence of another paragraph of the same article, the kind retrieval
# brings. A wrong source is worse than none, so it is strict: 43.6% of the right pairs reach it.
MEANING_THRESHOLD = 0.77


@dataclass(frozen=True)
class MeaningMatch:
    source: int  # the source's number, or 0 when none reaches the threshold
    cosine: float  # the closest of its sentences


def closest_sources(
    question: str,
    sentences: Sequence[str],
    sources: Mapping[int, str],
    embed: EmbedTexts,
    threshold: float = MEANING_THRESHOLD,
) -> list[MeaningMatch]:
    """For each sentence, the source (its number in `sources`, number to the text the model read)
    whose closest sentence is closest to it, when at least `threshold` (ties go to the lower number,
    the better-ranked source, as in the word check). One embedding call.

    A source's sentence counts only where the answer's sentence is closer to it than `question`
    is: "The framework of complexity classes fits the definition provided in source 1" says the
    question back, and is about as close as the question to every sentence on its topic.
    The word check leaves out the question's words for the same reason."""
    units = [(n, unit) for n, text in sources.items() for unit in document_sentences(text)]
    if not sentences or not units:
        return [MeaningMatch(0, 0.0) for _ in sentences]
    claims = [without_markers(s) for s in sentences]
    vectors = embed([*claims, question, *(text for _, text in units)])
    said = vectors[len(claims) + 1 :]
    closeness = vectors[: len(claims)] @ said.T
    cosines = np.where(closeness > said @ vectors[len(claims)], closeness, 0.0)
    numbers = np.array([n for n, _ in units])
    matches = []
    for claim, row in zip(claims, cosines, strict=True):
        # As in the word check, a number is a specific claim: a source without it does not say it
        # ("released in 1920" is as close in meaning to "released in 1921" as it is wrong).
        held = [n for n in sources if numbers_held(claim, sources[n])]
        best = {n: float(row[numbers == n].max()) for n in held if (numbers == n).any()}
        n = max(best, key=lambda k: (best[k], -k), default=0)
        cosine = best.get(n, 0.0)
        matches.append(MeaningMatch(n if n and cosine >= threshold else 0, cosine))
    return matches


def attach_by_meaning(
    answer: Answer, embed: EmbedTexts, threshold: float = MEANING_THRESHOLD
) -> tuple[Answer, list[MeaningMatch]]:
    """`answer` with each of its unsupported sentences that a source it read says in other words
    attached to that source: the source is cited (supported) with the sentence among its
    `paraphrases`, and the sentence is no longer unsupported. The text is unchanged."""
    read = {c.n: c for c in answer.sources_read}
    matches = closest_sources(
        answer.question, answer.unsupported_sentences, {n: c.text for n, c in read.items()}, embed, threshold
    )
    attached: dict[int, list[str]] = {}
    for sentence, match in zip(answer.unsupported_sentences, matches, strict=True):
        if match.source:
            # Without the markers it streamed with: listed under source 1, "[2]" would name another.
            attached.setdefault(match.source, []).append(without_markers(sentence))
    if not attached:
        return answer, matches
    cited = {c.n: c for c in answer.citations}
    for n, sentences in attached.items():
        base = cited.get(n, read[n])
        cited[n] = replace(base, supported=True, paraphrases=(*base.paraphrases, *sentences))
    supported = {n for n, c in cited.items() if c.supported}
    return (
        replace(
            answer,
            citations=tuple(cited[n] for n in sorted(cited)),
            unsupported_sentences=tuple(
                s for s, m in zip(answer.unsupported_sentences, matches, strict=True) if not m.source
            ),
            sources_read=tuple(
                replace(
                    c, supported=c.n in supported, paraphrases=cited[c.n].paraphrases if c.n in cited else ()
                )
                for c in answer.sources_read
            ),
        ),
        matches,
    )
