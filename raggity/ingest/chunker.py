"""Splits a Document into token-bounded chunks that break at headings, paragraphs and sentences."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from raggity.core.labels import is_label
from raggity.core.protocols import Tokenizer
from raggity.core.types import Chunk, Document, Heading, Location, PageSpan
from raggity.ingest.chunk_ids import ChunkIdAllocator, chunk_id, parent_id

__all__ = ["ChunkIdAllocator", "ChunkingSettings", "chunk_document", "chunk_id"]

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


@dataclass(frozen=True)
class ChunkingSettings:
    """Token budgets, counted by the embedder's tokenizer without special tokens, and how the
    chunks' words are split for keyword search (raggity/store/bm25_index.py): everything that
    decides what an ingest stores for a source besides the embedder."""

    chunk_tokens: int = 256
    parent_tokens: int = 1024
    bm25_tokenizer: str = "en_stem"

    def __post_init__(self) -> None:
        if self.chunk_tokens < 1 or self.parent_tokens < 1:
            raise ValueError(f"chunk_tokens and parent_tokens must be positive, got {self}")


@dataclass(frozen=True)
class _Section:
    """Text [start, end) under one heading; `major` numbers the enclosing level 1-2 heading."""

    start: int
    end: int
    trail: str
    major: int


@dataclass(frozen=True)
class _Child:
    id: str
    text: str
    trail: str
    location: Location
    n_tokens: int
    major: int


def chunk_document(
    doc: Document,
    tokenizer: Tokenizer,
    settings: ChunkingSettings,
    *,
    start_ordinal: int = 0,
    ids: ChunkIdAllocator | None = None,
) -> list[Chunk]:
    """Chunks of `doc` in text order; each is an exact slice of doc.text of at most
    settings.chunk_tokens tokens. Whitespace-only slices are dropped.

    A file that arrives as several segments is chunked by calling this once per segment, in order,
    with `start_ordinal` = chunks so far and one shared `ids` allocator, so that ordinals run on
    and repeated texts in different segments still get distinct ids.
    """
    if ids is None:
        ids = ChunkIdAllocator(doc.source)
    elif ids.source != doc.source:
        raise ValueError(f"id allocator is for {ids.source!r}, not {doc.source!r}")
    splitter = _Splitter(doc.text, tokenizer, settings.chunk_tokens)
    locate = _Locator(doc)
    children: list[_Child] = []
    # Code sections are definitions: a one-line function is still its own section.
    for section in _sections(doc.text, doc.headings, merge_bare=doc.kind != "code"):
        for start, text, n_tokens in splitter.pieces(section.start, section.end):
            # Lines and pages are those of the visible text, not of surrounding blank lines.
            first = start + len(text) - len(text.lstrip())
            last = start + len(text.rstrip()) - 1
            location = locate(first, last)
            children.append(
                _Child(ids.allocate(text), text, section.trail, location, n_tokens, section.major)
            )
    parents = _parent_ids(doc.source, children, settings)
    return [
        Chunk(
            id=child.id,
            source=doc.source,
            text=child.text,
            heading=child.trail,
            location=child.location,
            parent_id=parents[k],
            ordinal=start_ordinal + k,
            n_tokens=child.n_tokens,
        )
        for k, child in enumerate(children)
    ]


def _sections(text: str, headings: Sequence[Heading], *, merge_bare: bool = True) -> list[_Section]:
    """Non-empty stretches of text between consecutive heading offsets, with their heading trails.

    A heading's title may be empty: it closes the sections below its level without opening a named
    one (code uses it where a definition ends and its enclosing scope goes on)."""
    sections: list[_Section] = []
    stack: list[Heading] = []
    start, trail, major = 0, "", -1
    in_range = (h for h in headings if 0 <= h.offset <= len(text))
    previous: Heading | None = None
    for k, heading in enumerate(sorted(in_range, key=lambda h: h.offset)):
        # A heading with no body of its own ("# Guide" right before "## Install") joins the next
        # section instead of becoming a chunk that holds nothing but a title. After a heading
        # without a title (the end of an HTML definition list) a short line is text, not a title:
        # it joins the next entry of its section ("X has these methods:" before a list), never a
        # section of a higher level.
        merge = merge_bare and previous is not None and _only_heading(text[previous.offset : heading.offset])
        if merge and previous is not None and not previous.title.strip() and heading.level < previous.level:
            merge = not text[previous.offset : heading.offset].strip()
        if heading.offset > start and not merge:
            sections.append(_Section(start, heading.offset, trail, major))
            start = heading.offset
        previous = heading
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        trail = " > ".join(h.title.strip() for h in stack if h.title.strip())
        if heading.level <= 2:
            major = k
    if len(text) > start:
        sections.append(_Section(start, len(text), trail, major))
    return sections


def _only_heading(body: str) -> bool:
    """True for a bare heading: one ATX line, or a setext title with its underline."""
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    if len(lines) == 2:
        return set(lines[1]) <= {"="} or set(lines[1]) <= {"-"}
    return len(lines) <= 1 and len(body) <= 300


def _parent_ids(source: str, children: Sequence[_Child], settings: ChunkingSettings) -> list[str]:
    """Groups consecutive children up to parent_tokens, never across a level 1-2 heading."""
    solo = settings.parent_tokens <= settings.chunk_tokens
    result: list[str] = []
    group = ""
    group_tokens = 0
    group_major = -2
    for child in children:
        if solo or child.major != group_major or group_tokens + child.n_tokens > settings.parent_tokens:
            group = parent_id(source, child.id)
            group_tokens = 0
            group_major = child.major
        group_tokens += child.n_tokens
        result.append(group)
    return result


class _Splitter:
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


class _Locator:
    """The Location of a chunk's first..last visible characters; asked in increasing order."""

    def __init__(self, doc: Document) -> None:
        self._offset = doc.line_offset
        # Extracted HTML text has no file lines: its citations point at anchors instead.
        self._lines = None if doc.kind == "html" else _LineCounter(doc.text)
        self._pages = _PageFinder(doc.pages)
        self._anchors = sorted(doc.anchors, key=lambda anchor: anchor.offset)
        self._anchor_offsets = [anchor.offset for anchor in self._anchors]

    def __call__(self, first: int, last: int) -> Location:
        lines = self._lines
        return Location(
            line_start=0 if lines is None else self._offset + lines.line_of(first),
            line_end=0 if lines is None else self._offset + lines.line_of(last),
            page_start=self._pages.page_of(first),
            page_end=self._pages.page_of(last),
            anchor=self._anchor_at(first),
        )

    def _anchor_at(self, offset: int) -> str | None:
        """The nearest anchor that starts at or before `offset`; an empty name (a heading with no
        anchor of its own or above it) means the page itself."""
        index = bisect_right(self._anchor_offsets, offset) - 1
        return (self._anchors[index].name or None) if index >= 0 else None


class _LineCounter:
    """1-based line of a character offset; offsets must be asked for in increasing order."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._position = 0
        self._newlines = 0

    def line_of(self, offset: int) -> int:
        self._newlines += self._text.count("\n", self._position, offset)
        self._position = offset
        return self._newlines + 1


class _PageFinder:
    """Page of a character offset; characters between page spans count for the page before."""

    def __init__(self, spans: Sequence[PageSpan]) -> None:
        self._spans = sorted(spans, key=lambda span: span.start)
        self._starts = [span.start for span in self._spans]

    def page_of(self, offset: int) -> int | None:
        if not self._spans:
            return None
        index = max(0, bisect_right(self._starts, offset) - 1)
        return self._spans[index].page
