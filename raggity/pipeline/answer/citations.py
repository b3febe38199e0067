"""How much of a sentence a source supports, and helpers to read and strip its [n] markers.

attribution.py uses these to attach sources to an answer's sentences.
"""

from __future__ import annotations

import re

from raggity.core.stopwords import ENGLISH_STOPWORDS

_MARKER = re.compile(r"\[(\d+)\]")
_MARKER_AND_SPACE = re.compile(r"\s*\[\d+\](?=[\s.!?,;:]|$)")
# The punctuation that ends a sentence (focus.py and attribution.py add what may follow it): . ! or ?,
# but not the full stop of dotted initials ("U.S."). Both also require a space or the end after it,
# so "75.6" and "raggity.toml" stay whole: cut there, the model was given "75. 6 m" and copied it.
SENTENCE_STOP = r"(?:(?<!\.[A-Z])\.|[!?])[.!?]*"
# Numbers keep their thousands separators and decimals together ("1,066", "3.5"), so "1,066" and
# "1066" are one word and "3.5" is not the two words "3" and "5".
_WORD = re.compile(r"\d+(?:[,.]\d+)*|[a-z]+")
_NUMBER = re.compile(r"\d")
# A command-line option ("-W", "--force-with-lease") is a claim word too, kept as written: as a
# content word it was dropped, one letter long ("Use -w to turn warnings into errors." passed as
# supported by the "-W" entry on its other words), and "-w" is another option than "-W". Only
# where a word starts (after a space, quote or backtick), so "sphinx-build", "(S)-ketamine" and
# "f(-x)" hold none. A word like any other: an option the source writes otherwise ("-fd" for "-f"
# and "-d", "--[no-]thin") costs its share, and does not void the sentence as a number does.
_OPTION = re.compile(r"(?<![^\s\"'`“‘])--?[A-Za-z][\w-]*")

# Share of a sentence's content words that must appear in the cited text for it to count as support.
SUPPORT_THRESHOLD = 0.5


def _stem(word: str) -> str:
    """A light suffix stripper: enough that "arrived"/"arrives"/"arriving" and "cities"/"city" meet."""
    if _NUMBER.match(word):
        return word.replace(",", "")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in ENGLISH_STOPWORDS and len(w) > 1}


def claim_words(text: str) -> set[str]:
    """Content words and command-line options: what a sentence's support, and a question's match
    with a sentence (focus.py), are counted in."""
    return content_words(text) | set(_OPTION.findall(text))


# Changes whenever the support rule changes: a cached answer stores its citations' verdicts, and one
# judged by an older rule must not come back with them (the answer cache's key carries it).
SUPPORT_RULE_VERSION = "2"  # 2: the words a sentence repeats from the question must be held too


def support(sentence: str, source_text: str, given: frozenset[str] = frozenset()) -> float:
    """Share of the sentence's claim found in the source; 0 when a number it states is not there.

    `given` are words the sentence may repeat without evidence (the question's claim words): they
    appear in most retrieved sources, so counting them would let any source "support" a made-up
    answer; the share is of the words it adds. But the words it repeats must be in the source too:
    asked about tree decay of an index that has no article on it, "The classification of tree decay
    is important to radioactivity" adds one word, which a source on radioactivity holds, and it was
    shown as verified. A source that holds the added words but not what they are said of says
    something else, so the share of all the sentence's words counts as well, and the lower of the
    two is its support. A number is a specific claim (a date, a count): one the source lacks voids
    the support.
    """
    words = claim_words(_MARKER.sub(" ", sentence))
    if not words:
        return 0.0  # a bare "[1] [2]" claims nothing, so it cannot count as backed by evidence
    found = claim_words(source_text)
    if not _numbers_held(words, found):
        return 0.0
    claim = (words - given) or words
    return min(len(claim & found) / len(claim), len(words & found) / len(words))


def _numbers_held(words: set[str], found: set[str]) -> bool:
    return all(w in found for w in words if _NUMBER.match(w))


def numbers_held(sentence: str, source_text: str) -> bool:
    """Whether every number the sentence states is in the source: a source that lacks one does not
    say the sentence, in the same words or in others."""
    return _numbers_held(claim_words(_MARKER.sub(" ", sentence)), claim_words(source_text))


def markers(sentence: str) -> list[int]:
    return [int(n) for n in _MARKER.findall(sentence)]


def without_markers(text: str) -> str:
    """`text` without markers. A marker takes the space before it where a space or punctuation
    follows ("France [1]." is "France."); no other space is touched: "the .. note:: directive" and
    "a .gitignore file" are syntax, and closing every space before punctuation glued them on."""
    return _MARKER.sub("", _MARKER_AND_SPACE.sub("", text)).strip()
