"""Cuts one text's sections into slices of at most so many tokens, at the best boundary in reach:
a paragraph break, a line end, a sentence end, then any space (raggity.documents.chunker uses it)."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator

from raggity.core.labels import is_label
from raggity.core.protocols import Tokenizer

# A chunk never exceeds chunk_tokens * this many characters: one WordPiece [UNK] token can cover an
# arbitrarily long word, so the token limit alone would not bound a chunk's size.
MAX_CHARS_PER_TOKEN = 32

# Sections are tokenized in blocks of at most this many characters, ending after whitespace where
# possible: one encode of megabytes is ~3x slower than the same text in blocks.
_BLOCK_CHARS = 32_768

# Whitespace that tokenizers treat as a word separator. Python's str.isspace also accepts
# characters such as form feed, which BERT deletes, joining the words on either side.
_PLAIN_SPACE = frozenset(" \t\n\r")

# Split after each plain-space character, a whitespace-local tokenizer gives the same offsets as for
# the whole: then a slice cut after plain space needs no re-count. WordPiece (BERT) is local;
# byte-level BPE (tokens like " word") is not.
_LOCALITY_PROBE = "Hello, world!  Ünïcode café\tdon't 3.14 中文字 x\u0301y\r\n\nNew  paragraph\n  indented. "

_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s")
_LAST_SPACE = re.compile(r"\s\S*\Z")
_SPACE_RUN = re.compile(r"\s+")
_LAST_PUNCTUATION = re.compile(r"[^\w\s]\w*\Z")


class TokenSplitter:
    """Cuts sections of one text into slices of at most `limit` tokens at the best boundaries.

    Each section is tokenized once; cut points are chosen on those token offsets. A slice can
    tokenize differently on its own (a word cut in two), so a slice's count is re-checked by
    tokenizing it, unless both its ends follow plain space and the tokenizer is whitespace-local,
    in which case the section's count is already exact and checking would double the cost.
    """

    def __init__(self, text: str, tokenizer: Tokenizer, limit: int) -> None:
        self._text = text
        self._tokenizer = tokenizer
        self._limit = limit
        self._max_chars = limit * MAX_CHARS_PER_TOKEN
        self._local = _is_whitespace_local(tokenizer)
        self._section = (0, 0)
        self._starts: list[int] = []  # token start offsets in the current section
        self._rough_joins: list[int] = []  # block joins not after whitespace, where tokens may differ

    def pieces(self, start: int, end: int) -> Iterator[tuple[int, str, int]]:
        """(start, text, n_tokens) of the non-whitespace slices that together cover [start, end)."""
        self._section = (start, end)
        self._tokenize_section()
        position = start
        while position < end:
            cut, text, n_tokens = self._next_piece(position)
            if not text.isspace():
                yield position, text, n_tokens
            position = cut

    def _tokenize_section(self) -> None:
        # In blocks: one encode of megabytes is ~3x slower than the same text in blocks.
        start, end = self._section
        self._starts = []
        self._rough_joins = []
        low = start
        while low < end:
            high = end if end - low <= _BLOCK_CHARS else self._block_end(low, low + _BLOCK_CHARS)
            offsets = self._tokenizer.token_offsets(self._text[low:high])
            self._starts.extend(low + token_start for token_start, _ in offsets)
            if high < end and self._text[high - 1] not in _PLAIN_SPACE:
                self._rough_joins.append(high)
            low = high

    def _block_end(self, low: int, high: int) -> int:
        middle = (low + high) // 2
        newline = self._text.rfind("\n", middle, high)
        if newline >= 0:
            return newline + 1
        space = _LAST_SPACE.search(self._text, middle, high)
        return space.start() + 1 if space else high

    def _next_piece(self, start: int) -> tuple[int, str, int]:
        """The slice from `start` that fits the limit when tokenized on its own."""
        first = bisect_left(self._starts, start)
        budget = self._limit
        cut = self._cut(start, first, budget)
        while True:
            text = self._text[start:cut]
            if text.isspace():
                return cut, text, 0  # dropped by the caller, so its count does not matter
            inside = bisect_left(self._starts, cut) - first
            n_tokens = inside if self._exact(start, cut) else len(self._tokenizer.token_offsets(text))
            if n_tokens <= self._limit:
                return cut, text, n_tokens
            # The slice alone has more tokens than the section's tokens inside it, e.g. a word cut
            # into pieces or a giant [UNK] split at the character cap: cut earlier and check again.
            budget = min(budget, inside) - (n_tokens - self._limit)
            shorter = self._cut(start, first, budget) if budget >= 1 else start
            if not start < shorter < cut:
                if cut - start == 1:
                    raise ValueError(
                        f"chunk_tokens={self._limit} is too small: one character is {n_tokens} tokens"
                    )
                shorter = start + max(1, (cut - start) * self._limit // n_tokens)
            cut = shorter

    def _exact(self, start: int, cut: int) -> bool:
        """Whether the section's tokens inside [start, cut) are exactly the slice's own tokens."""
        section_start, section_end = self._section
        if (start, cut) == self._section and section_end - section_start <= _BLOCK_CHARS:
            return True  # the slice is the one block that was tokenized
        return (
            self._local
            and (start == section_start or self._text[start - 1] in _PLAIN_SPACE)
            and (cut == section_end or self._text[cut - 1] in _PLAIN_SPACE)
            and bisect_right(self._rough_joins, start) == bisect_left(self._rough_joins, cut)
        )

    def _cut(self, start: int, first: int, budget: int) -> int:
        """End of the chunk from `start` holding at most `budget` of the section's tokens (counted
        from index `first`), at the best kind of boundary in the second half of that window."""
        starts = self._starts
        end = self._section[1]
        over = first + budget
        limit = min(starts[over] if over < len(starts) else end, start + self._max_chars)
        if limit >= end:
            return end
        limit = max(limit, start + 1)
        # Looking in the second half first keeps a paragraph break near the start from making a tiny chunk.
        # Whitespace after the start of token `half - 1` leaves the chunk at least half the budget.
        half = first + max(1, budget // 2)
        low = starts[half - 1] + 1 if half - 1 < len(starts) and starts[half - 1] + 1 < limit else start
        # A cut right after a label (core/labels.py) comes after a sentence end: better the label
        # with the first sentences it introduces than alone at the end of a chunk.
        finders = (
            self._paragraph_break,
            self._line_end,
            self._sentence_end,
            self._any_line_end,
            self._last_space,
        )
        for find in finders:
            space = find(low, limit)
            if space >= 0:
                return self._after_space(space, limit)
        # No whitespace late enough: after punctuation, which ends a token (a long URL, a path)...
        punctuation = _LAST_PUNCTUATION.search(self._text, low, limit)
        if punctuation:
            return punctuation.start() + 1
        # ...else at whitespace early in the window (text before a giant word)...
        space = self._last_space(start, low)
        if space >= 0:
            return self._after_space(space, limit)
        # ...else between tokens, or inside one giant [UNK] token at the character cap.
        token = bisect_right(starts, limit) - 1
        return starts[token] if token >= 0 and starts[token] > start else limit

    def _after_space(self, space: int, limit: int) -> int:
        # Whitespace stays with the chunk before it, so the next chunk starts at visible text.
        run = _SPACE_RUN.match(self._text, space, limit)
        return run.end() if run else space + 1

    def _paragraph_break(self, low: int, high: int) -> int:
        found = -1
        for match in _PARAGRAPH_BREAK.finditer(self._text, low, high):
            if self._label_before(match.start()) < 0:
                found = match.start()
        return found

    def _line_end(self, low: int, high: int) -> int:
        end = high
        while (found := self._text.rfind("\n", low, end)) >= 0:
            label = self._label_before(found)
            if label < 0:
                return found
            end = label  # the line ends a label: look before the label instead
        return -1

    def _any_line_end(self, low: int, high: int) -> int:
        return self._text.rfind("\n", low, high)

    def _label_before(self, position: int) -> int:
        """Start of the label paragraph (core/labels.py) that the text before `position` ends
        with, or -1. A cut there would part a term or title from the text it introduces."""
        text, start = self._text, self._section[0]
        end = position
        while end > start and text[end - 1] in _PLAIN_SPACE:
            end -= 1
        line_start = max(start, text.rfind("\n", start, end) + 1)
        if not is_label(text[line_start:end]):
            return -1
        if line_start == start:
            return line_start
        # A label stands alone: a blank line (or the section's start) comes before it too.
        previous = max(start, text.rfind("\n", start, line_start - 1) + 1)
        return line_start if text[previous : line_start - 1].strip() == "" else -1

    def _sentence_end(self, low: int, high: int) -> int:
        found = -1
        for match in _SENTENCE_END.finditer(self._text, low, high):
            found = match.end() - 1
        return found

    def _last_space(self, low: int, high: int) -> int:
        match = _LAST_SPACE.search(self._text, low, high)
        return match.start() if match else -1


def _is_whitespace_local(tokenizer: Tokenizer) -> bool:
    whole = tokenizer.token_offsets(_LOCALITY_PROBE)
    for split in range(1, len(_LOCALITY_PROBE)):
        if _LOCALITY_PROBE[split - 1] not in _PLAIN_SPACE:
            continue
        left = tokenizer.token_offsets(_LOCALITY_PROBE[:split])
        right = [(a + split, b + split) for a, b in tokenizer.token_offsets(_LOCALITY_PROBE[split:])]
        if left + right != whole:
            return False
    return True
