"""Context focusing: from each retrieved passage, the sentences that bear on the question.

A small model given five whole parent chunks answers from the wrong one or copies headings; given
the few sentences that share the question's words (with the sentence after each, where an answer
often continues, and the label above each, which says what it is about, so its words count for the
sentence too), it answers more often and reads a shorter prompt, so the first token comes sooner.
Lines that are navigation, markup or minified code are dropped first: they carry no answer.

A sentence that only sends the reader elsewhere ("See the FAQ entry on UnboundLocalError.") shares
the question's words but holds no answer: it comes after every sentence that matches and does not.
Handed to the model alone, it was all the model read of the page that explained the error.

A table row is a record of its own, not a sentence: a kept row comes with its table's header, which
says what each cell is, and never with the next row; a header that matches (the question names a
column) comes with the first rows under it.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from raggity.core.labels import is_label
from raggity.core.types import Chunk
from raggity.pipeline.answer.citations import SENTENCE_STOP, claim_words

# Most sentences kept per source: the best matches, each with the sentence that follows it.
BEST_SENTENCES = 2
# A sentence runs to its stop and any closing quote or bracket, followed by a space or the end.
_SENTENCE = re.compile(rf"\S.*?(?:{SENTENCE_STOP}[\"')\]]*(?=\s|$)|$)")
_PARAGRAPH = re.compile(r"\n\s*\n")
# A line that starts its own unit even without a blank line before it: a heading or a list item.
_LINE_START = re.compile(r"^\s*(?:#{1,6}\s|[-*+•]\s|\d+[.)]\s)")
_GAP = " …"
# A line that names an option, a directive or a field: a definition term's alias.
_ALIAS = re.compile(r"^\s*(?:--?[A-Za-z]|\.\. \S|:[\w-]+:)")
# A table row as the readers lay it out: markdown ("| a | b |") or HTML cells joined by " | ".
_TABLE_ROW = re.compile(r"^\s*\||\s\|\s")
# Rows a matching header brings: as many units as two kept sentences with their followers.
HEADER_ROWS = 2 * BEST_SENTENCES - 1
# A short line with a letter is a name, not markup: the option "-W" above "Turn warnings into
# errors." (half of it is a dash), "C++", "x86-64". Dropped, it left the model the description
# without the option it describes.
_SHORT_NAME = re.compile(r"(?=.*[A-Za-z]).{1,8}")
# A sentence that opens by sending the reader elsewhere: "See ...", "Please refer to ...", "For more
# details, see ...". Only its opening: "The -n option is described in git-clean(1): it shows ..."
# holds the answer after its reference.
_POINTER = re.compile(
    r"^\W*(?:(?:please |also )?(?:see|refer to|consult)\b"
    r"|for (?:more|further|full|details|information)\b[^.!?:;]*?,?\s*see\b)",
    re.IGNORECASE,
)
_NAVIGATION = re.compile(
    r"^(?:skip to (?:main )?content|table of contents|contents|previous(?: topic| page)?|next(?: topic| page)?|"
    r"navigation|index|modules|search|menu|home|back to top|edit (?:on github|this page)|show source|"
    r"this page|quick search|©.*|copyright\b.*)\s*[:»«|]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class FocusedText:
    text: str
    matched: int  # sentences that share a content word with the question
    score: float  # the best sentence's weight (0 when nothing matched)


def is_boilerplate(line: str) -> bool:
    """Navigation labels, markup-only lines and minified code: lines with no prose to answer from."""
    stripped = line.strip()
    if not stripped:
        return False
    if _NAVIGATION.match(stripped):
        return True
    letters = sum(ch.isalpha() or ch.isspace() for ch in stripped)
    if letters / len(stripped) < 0.6 and not _SHORT_NAME.fullmatch(stripped):
        return True  # `[96, "UnboundLocalError: ..."]`, tables of symbols, markup
    return len(stripped) > 400 and stripped.count(" ") < len(stripped) / 40  # minified: long, few spaces


def clean(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not is_boilerplate(line))


# A label (core/labels.py) is a heading or a short line that is a paragraph of its own; a header is
# the first row of a table, a row any other.
_Kind = Literal["sentence", "label", "header", "row"]


@dataclass(frozen=True)
class _Unit:
    text: str
    kind: _Kind = "sentence"

    @property
    def label(self) -> bool:
        return self.kind == "label"

    @property
    def tabular(self) -> bool:
        return self.kind in ("header", "row")


def document_sentences(text: str) -> list[str]:
    """Sentences of `text`. A line break inside a paragraph is wrapping, not an end: documentation is
    hard-wrapped at 80 columns, and cutting there split "Download its tarball,\nunpack it into ..."
    into a fragment that lost the instruction. Blank lines, headings and list items do end one."""
    return [unit.text for unit in _units(text)]


def _units(text: str) -> list[_Unit]:
    """The sentences of `text`, each marked if it is a label or a table's row; neither is split."""
    pieces: list[_Unit] = []
    for paragraph in _PARAGRAPH.split(text):
        lines = paragraph.strip().splitlines()
        if len(lines) > 1 and all(_TABLE_ROW.search(line) for line in lines):
            # The first row a chunk holds of a table stands for its header (a chunk cut inside a
            # long table lends its first row that role: one extra row shown, nothing lost).
            pieces.extend(_Unit(line.strip(), "row" if n else "header") for n, line in enumerate(lines))
            continue
        # An option or directive with its aliases is one label over lines: "-n" above "--dry-run".
        # Only those: other short lines may be wrapped prose ("On Debian, run\nsudo apt install").
        joined = " ".join(line.strip() for line in lines)
        if is_label(joined) and (
            len(lines) == 1 or all(_ALIAS.match(line) and is_label(line) for line in lines)
        ):
            pieces.append(_Unit(joined, "label"))
            continue
        current: list[str] = []
        for line in lines:
            if _LINE_START.match(line) and current:
                pieces.append(_Unit(" ".join(current)))
                current = []
            current.append(line.strip())
            if line.lstrip().startswith("#"):  # a heading never runs on into the text below it
                heading = " ".join(current)
                pieces.append(_Unit(heading, "label" if is_label(line.lstrip("# ")) else "sentence"))
                current = []
        pieces.append(_Unit(" ".join(current)))
    units: list[_Unit] = []
    for piece in pieces:
        if piece.kind != "sentence":
            units.append(piece)
            continue
        sentences = (match.group(0).strip() for match in _SENTENCE.finditer(piece.text))
        units.extend(_Unit(sentence) for sentence in sentences if sentence)
    return units


def idf_weights(question: str, texts: Sequence[str]) -> dict[str, float]:
    """Weight of each question word by how few of the candidate sentences contain it: a word in
    every sentence ("Normans" in an article about Normans) says little about where the answer is."""
    words = claim_words(question)
    sentences = [claim_words(s) for text in texts for s in document_sentences(clean(text))]
    n = max(len(sentences), 1)
    return {w: math.log(1 + n / (1 + sum(w in s for s in sentences))) for w in words}


def focus(
    text: str, weights: dict[str, float], *, best: int = BEST_SENTENCES, heading: str = ""
) -> FocusedText:
    """The best-matching sentences of `text`, each with the sentence after it and the label above
    it, in document order. `heading`: the chunk's heading trail, which every sentence is about."""
    units = _units(clean(text))
    if not units:
        return FocusedText("", 0, 0.0)
    # fsum: a float sum depends on its order, and a set's order on the process's hash seed, so two
    # runs broke ties between sentences differently (6 of 1,087 calibration and benchmark prompts).
    subjects = [_subject_words(units, i) for i in range(len(units))]
    scores = [math.fsum(weights.get(w, 0.0) for w in words) for words in subjects]
    # A word of the heading trail is every sentence's: counted for all of them, the rest of the
    # question orders them ("git clean" on git-clean's page does not decide which entry, "-n" does).
    # Whether a sentence matches at all (scores > 0) is still decided by its own and its label's.
    page = claim_words(heading)
    ranks = [math.fsum(weights.get(w, 0.0) for w in words | page) for words in subjects]
    pointers = {i for i, unit in enumerate(units) if not unit.label and _POINTER.search(unit.text)}
    order = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (i in pointers, -ranks[i], i))
    ranked = order[:best]
    if not ranked:
        return FocusedText(_join(units, range(min(best + 1, len(units)))), 0, 0.0)  # retrieved for meaning
    keep = {j for i in ranked for j in _with_context(units, i)}
    matched = sum(s > 0 for s in scores)
    return FocusedText(_join(units, sorted(keep)), matched, max(scores))


def _subject_words(units: Sequence[_Unit], index: int) -> set[str]:
    """The words units[index] is about: its own and its label's. Under "html_theme", "The default is
    'alabaster'." is html_theme's default; scored on its own words, it lost its place to "The theme
    that the HTML output should use." and the model answered with another option's default."""
    words = claim_words(units[index].text)
    if not units[index].label and (label := _label_above(units, index)) is not None:
        words |= claim_words(units[label].text)
    return words


def _with_context(units: Sequence[_Unit], index: int) -> list[int]:
    """units[index] with what it needs to be read right: the sentence after a sentence or a label (an
    answer often runs on), unless that is another label; the header above a row, the first rows
    under a header; and the label above it all."""
    unit = units[index]
    if unit.kind == "row":
        header = next(j for j in range(index - 1, -1, -1) if units[j].kind == "header")
        kept = [header, index]
    elif unit.kind == "header":
        kept = _header_and_rows(units, index)
    elif index + 1 < len(units) and units[index + 1].kind == "header":
        kept = [index, *_header_and_rows(units, index + 1)]  # "... these models:" and the table
    elif index + 1 < len(units) and not units[index + 1].label:
        kept = [index, index + 1]
    else:
        kept = [index]  # the next label starts another entry: nothing of this one runs on into it
    if not unit.label and (label := _label_above(units, kept[0])) is not None:
        kept.append(label)
    return kept


def _header_and_rows(units: Sequence[_Unit], header: int) -> list[int]:
    """A header alone states nothing: it comes with the first rows under it."""
    below = range(header + 1, min(header + 1 + HEADER_ROWS, len(units)))
    return [header, *itertools.takewhile(lambda j: units[j].kind == "row", below)]


def _label_above(units: Sequence[_Unit], index: int) -> int | None:
    """The nearest label before units[index]."""
    return next((j for j in range(index - 1, -1, -1) if units[j].label), None)


def _join(units: Sequence[_Unit], keep: Sequence[int]) -> str:
    """The kept units in order: a gap marker where text was left out, a label on a line of its own."""
    pieces: list[str] = []
    for previous, index in zip([None, *keep], keep, strict=False):
        if previous is not None:
            if index != previous + 1:
                pieces.append(_GAP)
            lines_apart = any(units[i].label or units[i].tabular for i in (previous, index))
            pieces.append("\n" if lines_apart else " ")
        pieces.append(units[index].text)
    return "".join(pieces)


def focus_sources(question: str, chunks: Sequence[Chunk]) -> list[Chunk]:
    """Each chunk cut to its focused text, in retrieval order (best first: a small model reads the
    start of a short context most, and the first source is then also source [1]). A chunk none of
    whose sentences shares a word with the question is dropped when another one does: the best
    retrieved chunk is always kept."""
    weights = idf_weights(question, [c.text for c in chunks])
    focused = [(chunk, focus(chunk.text, weights, heading=chunk.heading)) for chunk in chunks]
    return [
        replace(chunk, text=f.text)
        for rank, (chunk, f) in enumerate(focused)
        if f.text and (rank == 0 or f.matched)
    ]
