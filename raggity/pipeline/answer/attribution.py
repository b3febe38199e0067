"""Citations by construction: each sentence of an answer gets the source that supports it.

A small model writes [n] markers badly (none, all of them, or the wrong one), so the pipeline does
not trust them: every sentence is checked against every source with the same support test, a marker
the model wrote is kept only when its source supports the sentence, and otherwise the best
supporting source is attached instead. A URL or credential-looking value is shown only next to a
source that contains it; one that no source contains is removed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from raggity.core.types import Citation
from raggity.pipeline.answer.citations import (
    SENTENCE_STOP,
    SUPPORT_THRESHOLD,
    claim_words,
    markers,
    support,
    without_markers,
)
from raggity.pipeline.answer.injection import instruction_warning, sensitive_spans
from raggity.pipeline.answer.prompt import PromptSource

# Put in place of a URL or credential-like value that no source holds.
REMOVED_VALUE = "(removed: not found in any source)"

# A sentence's stop owns the markers right after it, and a space or the end follows. It ends a
# word: a stop after a space is syntax the model quotes ("use the .. note:: directive"), and a
# marker put there would split the directive. Only here: a stop is where a marker goes, and focusing
# (which shares SENTENCE_STOP) saw no such case, so its prompts and calibration stay as they are.
_SENTENCE_END = re.compile(rf"(?<=[^\s.!?]){SENTENCE_STOP}(?:\s*\[\d+\])*(?=\s|$)")
# Initials and dotted abbreviations are not ends: the model writes "the U. S. National Science
# Foundation" and "e.g. the guide", and a marker put there splits the name ("the U [1]. S. National").
# But "written in C. It was made by Google." is two sentences: merged, the second would share the
# first's support and hide a made-up claim. So only a run of initials ("U. S.", "J. R. R."), whatever
# follows it, and dotted letters ("e.g.", "U.S."); a lone capital ("John F. Kennedy") still ends
# one. Whether "U." starts a run is decided by the text after it, and only from "not yet" to "end"
# as a streamed reply grows ("U. S" may become "U. S." or "U. Such"), so what was shown stays.
_WORD_START = r"(?:^|[\s(\"'“\[])"
_DOTTED_OR_AFTER_INITIAL = re.compile(rf"{_WORD_START}(?:(?:[A-Za-z]\.)+[A-Za-z]|[A-Z]\.\s+[A-Z])$")
_LONE_CAPITAL = re.compile(rf"{_WORD_START}[A-Z]$")
_INITIAL_OR_NOTHING_YET = re.compile(r"\s*$|\s+[A-Z](?:\.|$)")
_TRAILING_PUNCTUATION = re.compile(r"[.!?:;,]+$")


@dataclass(frozen=True)
class AttributedSentence:
    text: str  # as shown: the model's words, markers replaced by the verified ones
    sources: tuple[int, ...]  # sources attached to it
    supported: bool  # a source supports it, or it claims nothing that needs one
    written: tuple[int, ...]  # markers the model wrote
    rejected: tuple[int, ...]  # written markers whose source did not support it (or does not exist)
    removed: tuple[str, ...]  # URLs/credentials no source contains


@dataclass(frozen=True)
class Attribution:
    text: str
    sentences: tuple[AttributedSentence, ...]
    citations: tuple[Citation, ...]
    unsupported_sentences: tuple[str, ...]

    @property
    def verified(self) -> bool:
        return any(c.supported for c in self.citations)


def attribute_sentence(
    sentence: str, sources: Sequence[PromptSource], given: frozenset[str] = frozenset()
) -> AttributedSentence:
    """`given`: the question's content words, which a sentence may repeat without evidence."""
    by_n = {s.n: s for s in sources}
    written = tuple(dict.fromkeys(markers(sentence)))
    bare = without_markers(sentence)
    if not claim_words(bare):
        # "Yes." or a stray "[2]": nothing to verify, so nothing to attach.
        return AttributedSentence(bare, (), True, written, written, ())
    # A source is its text and the heading trail it is under ("sphinx-build > Options > -W"): "use
    # the -W option" says no more than the source does, though its text never says "option".
    scores = {n: support(bare, f"{s.text}\n{s.chunk.heading}", given) for n, s in by_n.items()}
    verified = [n for n in written if scores.get(n, 0.0) >= SUPPORT_THRESHOLD]
    if not verified:
        best = max(scores, key=lambda n: (scores[n], -n), default=None)
        verified = [best] if best is not None and scores[best] >= SUPPORT_THRESHOLD else []
    chosen = list(verified)
    unheld = []
    for start, end in sensitive_spans(bare):
        holders = [n for n in sorted(by_n) if bare[start:end] in by_n[n].text]
        if not holders:
            unheld.append((start, end))
        elif not set(holders) & set(chosen):
            chosen.append(holders[0])  # its source is shown next to it, supported or not
    removed = tuple(dict.fromkeys(bare[start:end] for start, end in unheld))
    # Right to left, so that each replacement leaves the places still to replace where they were.
    for start, end in reversed(unheld):
        bare = bare[:start] + REMOVED_VALUE + bare[end:]
    rejected = tuple(n for n in written if n not in verified)
    return AttributedSentence(
        _with_markers(bare, sorted(set(chosen))),
        tuple(sorted(set(chosen))),
        bool(verified),
        written,
        rejected,
        removed,
    )


def _with_markers(sentence: str, numbers: Sequence[int]) -> str:
    if not numbers:
        return sentence
    tags = "".join(f"[{n}]" for n in numbers)
    end = _TRAILING_PUNCTUATION.search(sentence)
    if end is None:
        return f"{sentence} {tags}"
    return f"{sentence[: end.start()].rstrip()} {tags}{end.group(0)}"


def _abbreviation(line: str, stop: int, after: int) -> bool:
    """Whether the full stop at `stop` (its stops and markers end at `after`) ends an initial in a
    run of them or dotted letters, rather than a sentence."""
    if _DOTTED_OR_AFTER_INITIAL.search(line, 0, stop):
        return True
    return bool(_LONE_CAPITAL.search(line, 0, stop)) and bool(_INITIAL_OR_NOTHING_YET.match(line, after))


def reply_sentences(text: str) -> list[tuple[str, str]]:
    """(sentence, separator after it): lines stay lines, sentences within a line join with a space.
    A stop after an odd number of backticks on its line is code, not an end: a marker put there
    would land inside the code span. (Counted from the line's start, so a streamed prefix splits as
    the whole reply will.)"""
    pieces: list[tuple[str, str]] = []
    for line, newline in re.findall(r"([^\n]*)(\n*)", text):
        start = 0
        line_pieces = []
        for match in _SENTENCE_END.finditer(line):
            if line.count("`", 0, match.start()) % 2:
                continue  # inside inline code: "the `.. note::` directive" is one sentence
            if line[match.start()] == "." and _abbreviation(line, match.start(), match.end()):
                continue
            line_pieces.append(line[start : match.end()].strip())
            start = match.end()
        line_pieces.append(line[start:].strip())
        kept = [p for p in line_pieces if p]
        pieces += [(p, " ") for p in kept[:-1]]
        if kept:
            pieces.append((kept[-1], newline or " "))
    return pieces


def attribute(
    answer: str, sources: Sequence[PromptSource], given: frozenset[str] = frozenset()
) -> Attribution:
    attributed = [(attribute_sentence(s, sources, given), sep) for s, sep in reply_sentences(answer)]
    return assemble([a for a, _ in attributed], [sep for _, sep in attributed], sources)


def assemble(
    attributed: Sequence[AttributedSentence], separators: Sequence[str], sources: Sequence[PromptSource]
) -> Attribution:
    """The whole answer from its attributed sentences: text, citations (source order) and the
    sentences no source supports."""
    by_n = {s.n: s for s in sources}
    shown = sorted({n for a in attributed for n in a.sources})
    supporting = {n for a in attributed if a.supported for n in a.sources}
    citations = tuple(_citation(by_n[n], supported=n in supporting) for n in shown)
    text = "".join(a.text + sep for a, sep in zip(attributed, separators, strict=True)).strip()
    unsupported = tuple(a.text for a in attributed if not a.supported)
    return Attribution(text, tuple(attributed), citations, unsupported)


def sources_read(sources: Sequence[PromptSource], citations: Sequence[Citation]) -> tuple[Citation, ...]:
    """Every source the model was given, as numbered in its prompt, with the text it read."""
    supporting = {c.n for c in citations if c.supported}
    return tuple(_citation(s, supported=s.n in supporting) for s in sources)


def _citation(source: PromptSource, *, supported: bool) -> Citation:
    return Citation(
        source.n,
        source.chunk.source,
        source.chunk.location,
        source.text,
        supported=supported,
        warning=instruction_warning(source.text),  # what the model read
    )


def flag_sources(citations: Sequence[Citation]) -> tuple[Citation, ...]:
    """The citations with their instruction warnings recomputed (a cached answer stores none)."""
    return tuple(replace(c, warning=instruction_warning(c.text)) for c in citations)
