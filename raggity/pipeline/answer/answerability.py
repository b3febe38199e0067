"""Answerability: whether the retrieved sources can answer the question, from several signals.

The dense cosine floor alone declined 3 of 28 on-topic questions the sources do not answer. Two more
signals are read here: how much of the question the best source covers (lexical evidence, the same
words a reader would look for), and the model's own judgement, read from prompts that are the answer
prompt with another last line (read before generating, so a decline costs no answer tokens and the
answer reuses the evaluated sources). The judgement is where the model decides to decline: the
answer prompt offers no refusal. Thresholds come from bench/calibrate_answerability.py, per model
(results in bench/results/answerability.<model>.json); see docs/answers.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from raggity.core.protocols import Generator
from raggity.pipeline.answer.citations import content_words
from raggity.pipeline.answer.prompt import REFUSAL_OPENING

# Terminal escape sequences (CSI such as ESC [ 2 J, OSC such as ESC ] 0 ; title BEL) and other control
# characters: their letters ("J") are not words of a question.
_TERMINAL_CODES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x00-\x1f\x7f-\x9f]"
)

Reason = Literal["", "coverage", "model"]


@dataclass(frozen=True)
class Thresholds:
    min_coverage: float = 0.3
    # A model nobody calibrated declines only when it finds refusing more likely than answering.
    max_refusal_probability: float = 0.5


# Calibrated per packaged model on a question-id-hash split of squad2-dev (answerable vs impossible)
# and SciFact claims asked of it: the pair that declines the most impossible and out-of-corpus
# questions while declining at most 5% of the answerable ones, cosine floor included. A refusal probability
# means something different for every model, so each model has its own pair
# (bench/calibrate_answerability.py, bench/results/answerability.<model>.json, docs/answers.md).
CALIBRATED: dict[str, Thresholds] = {
    # Prompt version 10, 400 answerable and 400 impossible questions and the split's 87 SciFact
    # claims (bench/results/answerability.qwen2.5-coder-1.5b-instruct.json), at the default cosine
    # floor 0.25, which declines a quarter of unrelated questions before the generator runs. 200 per
    # group had chosen (0.15, 0.5726), which declines 5.75% of these 400 answerable questions: the
    # 5% point sits on a steep slope, and twice the sample places it better.
    "qwen2.5-coder-1.5b-instruct": Thresholds(min_coverage=0.25, max_refusal_probability=0.5813),
    # Prompt version 10, the same 400 questions per group, with the default cosine floor (0.25).
    # 200 per group (version 9) had chosen (0.4, 0.7179), 4.5% of these answerable questions.
    "qwen2.5-coder-0.5b-instruct": Thresholds(min_coverage=0.4, max_refusal_probability=0.7146),
}


def thresholds_for(model: str) -> Thresholds:
    """The calibrated thresholds of a packaged model by name; the uncalibrated default otherwise
    (a pulled model, or any GGUF given by model_path)."""
    return CALIBRATED.get(model, Thresholds())


@dataclass(frozen=True)
class Verdict:
    answerable: bool
    reason: Reason
    value: float


def coverage(question: str, source_texts: Sequence[str]) -> float:
    """Largest share of the question's content words that one source contains. A question with no
    English content word ("why?", "What is C?", one in Russian) cannot be measured: 1.0, the model
    judges it. One with no letter at all (punctuation, or escape sequences alone, which once got a
    confident answer marked verified) asks nothing: 0."""
    words = content_words(question)
    if not words:
        return 1.0 if any(ch.isalpha() for ch in _TERMINAL_CODES.sub("", question)) else 0.0
    return max((len(words & content_words(text)) / len(words) for text in source_texts), default=0.0)


def judge_coverage(value: float, thresholds: Thresholds) -> Verdict:
    return Verdict(
        value >= thresholds.min_coverage, "" if value >= thresholds.min_coverage else "coverage", value
    )


def refusal_probability(
    model: Generator, refusal_offered: Sequence[dict[str, str]], yes_no: Sequence[dict[str, str]]
) -> tuple[float, float, float]:
    """The model's judgement that the sources do not answer, read two ways from prompts that share
    all but their last line: the probability of opening with the refusal it was offered, and the
    share of "No" in its reply to whether the sources contain the answer. Returns their mean, then
    the two readings. Each reading forces a few tokens; nothing is generated."""
    # Read fresh: the same prompt is then judged alike whatever the model read before (another
    # question in a chat, an MCP server or `rag eval`), as `rag ask` judges it in a new process.
    yes = model.continuation_probability(yes_no, "Yes", fresh=True)
    no = model.continuation_probability(yes_no, "No")
    # Last: the answer prompt is this prompt's start (its last line begins with the answer
    # instruction), so after it llama's cache holds everything the answer needs but the template's end.
    opening = model.continuation_probability(refusal_offered, REFUSAL_OPENING)
    asked = no / (yes + no) if yes + no > 0 else opening
    return (opening + asked) / 2, opening, asked


def judge_refusal(probability: float, thresholds: Thresholds) -> Verdict:
    # At the 4 decimals the trace records and calibration reads: the ceiling is one of those values.
    ok = round(probability, 4) <= thresholds.max_refusal_probability
    return Verdict(ok, "" if ok else "model", probability)
