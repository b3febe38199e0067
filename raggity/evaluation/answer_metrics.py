"""Answer-quality measures of the SQuAD 2.0 evaluation script, and checks on what an answer's text holds."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

from raggity.core.stopwords import ENGLISH_STOPWORDS

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)
# A citation marker as the pipeline writes and reads it (raggity/pipeline/answer/citations.py).
_MARKER = re.compile(r"\[\d+\]")
_WORD = re.compile(r"\w+", re.UNICODE)


def normalize_answer(text: str) -> str:
    """Lowercase, drop ASCII punctuation, the articles a/an/the and extra whitespace.

    The order of the steps is the official SQuAD v2 script's `normalize_answer`, so scores compare
    with published ones.
    """
    lowered = text.lower()
    no_punctuation = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    no_articles = _ARTICLES.sub(" ", no_punctuation)
    return " ".join(no_articles.split())


def strip_markers(text: str) -> str:
    """The answer without its `[n]` citation markers: they are pointers, not part of what it says."""
    return _MARKER.sub(" ", text)


def token_f1(prediction: str, gold: str) -> float:
    """The SQuAD script's `compute_f1`: harmonic mean of token precision and recall after normalising.

    When either side normalises to no tokens, the score is 1 if both do, else 0 (as in the script).
    """
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(gold).split()
    if not predicted or not expected:
        return float(predicted == expected)
    same = sum((Counter(predicted) & Counter(expected)).values())
    if same == 0:
        return 0.0
    precision = same / len(predicted)
    recall = same / len(expected)
    return 2 * precision * recall / (precision + recall)


def best_f1(prediction: str, golds: Sequence[str]) -> float:
    """The highest token F1 against any gold answer; no gold answers means the empty answer is gold."""
    return max(token_f1(prediction, gold) for gold in (golds or ("",)))


def contains_answer(prediction: str, golds: Sequence[str]) -> bool:
    """True when some gold answer's normalised tokens appear, in order and whole, in the prediction's.

    Whole tokens, so that the gold "1" is not found inside "1066"; a gold answer that normalises to
    nothing (e.g. "the") is never found.
    """
    padded = f" {normalize_answer(prediction)} "
    for gold in golds:
        expected = normalize_answer(gold)
        if expected and f" {expected} " in padded:
            return True
    return False


def is_marker_only(text: str) -> bool:
    """True when the answer says nothing: once its `[n]` markers are removed, no word is left that is
    not an English function word (so "[1] [2].", "" and "It is [3]." all count)."""
    words = _WORD.findall(strip_markers(text).lower())
    return not any(word not in ENGLISH_STOPWORDS for word in words)
