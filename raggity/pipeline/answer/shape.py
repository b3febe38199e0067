"""Tells a written answer from replies that only look like one: bare citation markers, headings or
titles, a list of names, which small models produce instead of answering, or the question said back
("Yes, there are known size limits to SQLite databases [1].", asked whether there are any)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from raggity.core.stopwords import ENGLISH_STOPWORDS

AnswerShape = Literal["prose", "empty", "markers_only", "headings", "name_list", "restated"]

_MARKER = re.compile(r"\[\s*\d+\s*\]")
# A letter or a digit: "4 [1]." answers "How many?"; only markers and punctuation are left out.
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")
_MARKDOWN_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _is_name(item: str) -> bool:
    """Only capitalised words, numbers and function words, no sentence punctuation: a name or title."""
    words = _WORD.findall(item)
    if not words or len(words) > 8 or re.search(r"[.!?]\s*$", item):
        return False
    return all(w[0].isupper() or w[0].isdigit() or w.lower() in ENGLISH_STOPWORDS for w in words)


def _items(text: str) -> list[str]:
    """Marker-led items ("[1] Edward Said [2] Ronald Robinson") or one item per line or bullet."""
    stripped = text.strip()
    marker_led = bool(_MARKER.match(stripped))
    parts = _MARKER.split(stripped) if marker_led else [_BULLET.sub("", line) for line in _lines(stripped)]
    cleaned = (_MARKER.sub("", p).strip(" \t-–—:;,") for p in parts)
    return [p for p in cleaned if p]


# Any word of letters or digits, in any script, one character long or more, unstemmed: "4", "C",
# "branch" against "branches". claim_words (citations.py) drops one-character words and stems, and
# on it "Frobnicator starts 4 workers." said nothing new to "How many workers does it start?".
_TERM = re.compile(r"\w+")
# A yes-or-no question opens with an auxiliary verb; "is there ...?" asks for the thing itself.
_POLAR = re.compile(
    r"^\W*(?:is|are|was|were|do|does|did|can|could|will|would|should|shall|may|might|must|has|have|had)\b"
    r"(?!\s+there\b)",
    re.IGNORECASE,
)
# "Which is older, the Louvre or the Prado?": naming one of its alternatives answers it.
_ALTERNATIVES = re.compile(r"\bor\b", re.IGNORECASE)


def _terms(text: str) -> set[str]:
    return {w for w in _TERM.findall(_MARKER.sub(" ", text).lower()) if w not in ENGLISH_STOPWORDS}


class YesNoWords(frozenset[str]):
    """The words of a yes-or-no question. "Yes" answers it, but a reply that names nothing beyond
    them ("Yes, you can use basic authentication with the client [1].", asked whether one can) does
    not say what in the source does it: it must name a setting, class, command, option, value or
    proper name the question did not (see `names`)."""


# A name as a reply writes it: an option ("-n", "--dry-run"), a dotted or underscored identifier
# ("os.path", "max_connections"), a call ("stop()"), an assignment ("auth="), a word or a number.
_NAME_TOKEN = re.compile(r"(?<![\w-])(?:--?)?[^\W_][\w]*(?:[._:/=-]+[\w]+)*(?:\(\))?=?")
_QUOTED = re.compile(r"`([^`]+)`")
# Abbreviations that look dotted like an identifier and name nothing.
_NOT_NAMES = frozenset({"e.g", "i.e", "etc", "vs", "cf"})


def _starts_sentence(text: str, at: int) -> bool:
    """Whether the word at `at` opens the text, a sentence or a line (a capital there names nothing)."""
    i = at - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i < 0 or text[i] in ".!?:\n"


def names(text: str) -> set[str]:
    """The words of `text` that name something, lowercased: any word of a name token in backticks,
    an option, an identifier with dots, underscores, slashes, brackets or an equals sign, a number,
    a word with a capital past its first letter ("HTTPBasicAuth", "NULL"), or a capitalised word
    that does not start a sentence ("Linux", "Client"). Plain words ("supports", "use") name
    nothing."""
    bare = _MARKER.sub(" ", text)
    found = {w for quoted in _QUOTED.findall(bare) for w in _TERM.findall(quoted.lower())}
    for match in _NAME_TOKEN.finditer(bare):
        token = match.group()
        word = token.strip("-=()")
        if word.lower().rstrip(".") in _NOT_NAMES:
            continue
        coded = token.startswith("-") or any(c in token for c in "._:/=()") or any(c.isdigit() for c in word)
        capital = any(c.isupper() for c in word[1:]) or (
            word[:1].isupper() and not _starts_sentence(bare, match.start())
        )
        if coded or capital:
            found |= set(_TERM.findall(token.lower()))
    return {w for w in found if w not in ENGLISH_STOPWORDS}


def words_to_add_to(question: str) -> frozenset[str]:
    """The question's words, which a reply must go beyond to answer it. A yes-or-no question's
    (YesNoWords): a reply must name something beyond them (a setting, a command, a value). None
    when the question offers alternatives ("the Louvre or the Prado?"): naming one answers it. "Is
    there an equivalent of C's ?: operator?" asks for the equivalent, and is not a yes-or-no
    question."""
    if _ALTERNATIVES.search(question):
        return frozenset()
    if _POLAR.match(question):
        return YesNoWords(_terms(question))
    return frozenset(_terms(question))


def adds_to(text: str, asked: frozenset[str]) -> bool:
    """Whether `text` holds a word that `asked` (words_to_add_to) lacks, stopwords such as a
    leading "yes" aside: a reply without one said the question back. For a yes-or-no question, the
    word must name something (`names`). No `asked` (alternatives offered), nothing is."""
    if isinstance(asked, YesNoWords):
        return bool(names(text) - asked)
    return not asked or bool(_terms(text) - asked)


def answer_shape(text: str, headings: Sequence[str] = (), asked: frozenset[str] = frozenset()) -> AnswerShape:
    """What kind of reply `text` is. `headings` are the sources' headings and titles: a reply made
    only of them repeats the sources' structure instead of answering. `asked`: the question's
    words_to_add_to; prose that adds none restates the question."""
    if not text.strip():
        return "empty"
    bare = _MARKER.sub(" ", text)
    if not _LETTER_OR_DIGIT.search(bare):
        return "markers_only"
    lines = _lines(bare)
    known = {h.strip().lower() for heading in headings for h in heading.split(" > ") if h.strip()}
    if lines and all(_MARKDOWN_HEADING.match(line) or line.strip("#*_ ").lower() in known for line in lines):
        return "headings"
    if len(lines) > 1 and len({line.lower() for line in lines}) == 1:
        return "headings"  # one title repeated: nothing was answered
    items = _items(text)
    if len(items) > 1 and all(_is_name(item) for item in items):
        return "name_list"
    return "prose" if adds_to(text, asked) else "restated"


def is_answer(shape: AnswerShape) -> bool:
    return shape == "prose"
