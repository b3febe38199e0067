"""Answerability: whether the retrieved sources can answer the question, from several signals.

The dense cosine floor alone declined 3 of 28 on-topic questions the sources do not answer. Two more
signals are read here: how much of the question the best source covers (lexical evidence, the same
words a reader would look for), and the model's own judgement, the probability it gives to the fixed
refusal reply in the very prompt it would answer (read before generating, so a decline costs no
answer tokens and an answer reuses the evaluated prompt). Thresholds come from
bench/calibrate_answerability.py (results in bench/results/answerability.json); see docs/answers.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from raggity.pipeline.citations import content_words

Reason = Literal["", "coverage", "model"]

# Calibrated with the default 0.5B model on a question-id-hash split of squad2-dev (answerable vs
# impossible) and SciFact claims asked of it, 25 questions per group: the pair that declines the most
# impossible and out-of-corpus questions while adding at most 5% answerable declines to the cosine
# floor's (bench/calibrate_answerability.py, bench/results/answerability.json, docs/answers.md).
MIN_COVERAGE = 0.3
MAX_REFUSAL_PROBABILITY = 0.1403


@runtime_checkable
class ContinuationScorer(Protocol):
    """A generator that can say how likely its reply to `messages` starts with `text`."""

    def continuation_probability(self, messages: Sequence[dict[str, str]], text: str) -> float: ...


@dataclass(frozen=True)
class Thresholds:
    min_coverage: float = MIN_COVERAGE
    max_refusal_probability: float = MAX_REFUSAL_PROBABILITY


@dataclass(frozen=True)
class Verdict:
    answerable: bool
    reason: Reason
    value: float


def coverage(question: str, source_texts: Sequence[str]) -> float:
    """Largest share of the question's content words that one source contains (1.0 for a question
    with none, such as "why?": nothing to check against)."""
    words = content_words(question)
    if not words:
        return 1.0
    return max((len(words & content_words(text)) / len(words) for text in source_texts), default=0.0)


def judge_coverage(value: float, thresholds: Thresholds) -> Verdict:
    return Verdict(
        value >= thresholds.min_coverage, "" if value >= thresholds.min_coverage else "coverage", value
    )


def judge_refusal(probability: float, thresholds: Thresholds) -> Verdict:
    # At the 4 decimals the trace records and calibration reads: the ceiling is one of those values.
    ok = round(probability, 4) <= thresholds.max_refusal_probability
    return Verdict(ok, "" if ok else "model", probability)
