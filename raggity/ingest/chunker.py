"""Splits a Document into token-bounded chunks that break at headings, paragraphs and sentences."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from raggity.core.protocols import Tokenizer
from raggity.core.types import Chunk, Document, Heading, Location, PageSpan
from raggity.ingest.chunk_ids import ChunkIdAllocator, chunk_id, parent_id

__all__ = ["ChunkIdAllocator", "ChunkingSettings", "chunk_document", "chunk_id"]

# A chunk never exceeds chunk_tokens * this many characters: one WordPiece [UNK] token can cover an
# arbitrarily long word, so the token limit alone would not bound a chunk's size.
MAX_CHARS_PER_TOKEN = 32

# Where the first chunk of a section is guessed to end; later guesses use the previous chunk's ratio.
_INITIAL_CHARS_PER_TOKEN = 4.0

_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s")
_LAST_SPACE = re.compile(r"\s\S*\Z")
_SPACE_RUN = re.compile(r"\s+")


@dataclass(frozen=True)
class ChunkingSettings:
    """Token budgets, counted by the embedder's tokenizer without special tokens."""

    chunk_tokens: int = 256
    parent_tokens: int = 1024

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
    lines = _LineCounter(doc.text)
    pages = _PageFinder(doc.pages)
    children: list[_Child] = []
    for section in _sections(doc.text, doc.headings):
        for start, text, n_tokens in splitter.pieces(section.start, section.end):
            # Lines and pages are those of the visible text, not of surrounding blank lines.
            first = start + len(text) - len(text.lstrip())
            last = start + len(text.rstrip()) - 1
            location = Location(
                line_start=doc.line_offset + lines.line_of(first),
                line_end=doc.line_offset + lines.line_of(last),
                page_start=pages.page_of(first),
                page_end=pages.page_of(last),
            )
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


def _sections(text: str, headings: Sequence[Heading]) -> list[_Section]:
    """Non-empty stretches of text between consecutive heading offsets, with their heading trails."""
    sections: list[_Section] = []
    stack: list[Heading] = []
    start, trail, major = 0, "", -1
    in_range = (h for h in headings if 0 <= h.offset <= len(text))
    for k, heading in enumerate(sorted(in_range, key=lambda h: h.offset)):
        if heading.offset > start:
            sections.append(_Section(start, heading.offset, trail, major))
        start = heading.offset
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        trail = " > ".join(h.title.strip() for h in stack if h.title.strip())
        if heading.level <= 2:
            major = k
    if len(text) > start:
        sections.append(_Section(start, len(text), trail, major))
    return sections


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

    Each chunk's own text is what gets tokenized, so every count is exact for the slice as the
    embedder will see it. Where to cut is first guessed from the previous chunk's characters per
    token; a guess that turns out too long is re-cut at the slice's own token offsets.
    """

    def __init__(self, text: str, tokenizer: Tokenizer, limit: int) -> None:
        self._text = text
        self._tokenizer = tokenizer
        self._limit = limit
        self._max_chars = limit * MAX_CHARS_PER_TOKEN
        self._chars_per_token = _INITIAL_CHARS_PER_TOKEN

    def pieces(self, start: int, end: int) -> Iterator[tuple[int, str, int]]:
        """(start, text, n_tokens) of the non-whitespace slices that together cover [start, end)."""
        # Reset per section, so that editing one section cannot move the cuts in another.
        self._chars_per_token = _INITIAL_CHARS_PER_TOKEN
        position = start
        while position < end:
            cut, text, n_tokens = self._next_piece(position, end)
            if not text.isspace():
                yield position, text, n_tokens
            position = cut

    def _next_piece(self, start: int, end: int) -> tuple[int, str, int]:
        """The slice from `start` that fits the limit when tokenized on its own."""
        guess = start + max(1, int(self._limit * self._chars_per_token))
        cut = self._cut(start, end, guess, (start + guess) // 2)
        while True:
            text = self._text[start:cut]
            if text.isspace():
                return cut, text, 0  # dropped by the caller, so its count does not matter
            offsets = self._tokenizer.token_offsets(text)
            if offsets:
                self._chars_per_token = (cut - start) / len(offsets)
            if len(offsets) <= self._limit:
                return cut, text, len(offsets)
            # Too long: the slice's own offsets say exactly where the limit falls, up to the tokens
            # at the new cut, which can differ when a word is cut in two; hence the loop.
            over = start + offsets[self._limit][0]
            half = start + offsets[self._limit // 2][0]
            shorter = self._cut(start, end, over, half)
            if not start < shorter < cut:
                if cut - start == 1:
                    raise ValueError(f"chunk_tokens={self._limit} is too small: one character is {len(offsets)} tokens")
                shorter = start + max(1, (cut - start) * self._limit // len(offsets))
            cut = shorter

    def _cut(self, start: int, end: int, limit: int, half: int) -> int:
        """End of the chunk from `start` that ends by `limit`, at the best kind of boundary,
        looked for first between `half` and `limit`."""
        limit = max(start + 1, min(limit, start + self._max_chars))
        if limit >= end:
            return end
        # Looking in the second half first keeps a paragraph break near the start from making a tiny chunk.
        low = half if start < half < limit else start
        for find in (self._paragraph_break, self._line_end, self._sentence_end, self._last_space):
            space = find(low, limit)
            if space >= 0:
                return self._after_space(space, limit)
        space = self._last_space(start, low)
        # No whitespace at all (a giant word, or text without spaces): cut at the limit itself.
        return self._after_space(space, limit) if space >= 0 else limit

    def _after_space(self, space: int, limit: int) -> int:
        # Whitespace stays with the chunk before it, so the next chunk starts at visible text.
        run = _SPACE_RUN.match(self._text, space, limit)
        return run.end() if run else space + 1

    def _paragraph_break(self, low: int, high: int) -> int:
        found = -1
        for match in _PARAGRAPH_BREAK.finditer(self._text, low, high):
            found = match.start()
        return found

    def _line_end(self, low: int, high: int) -> int:
        return self._text.rfind("\n", low, high)

    def _sentence_end(self, low: int, high: int) -> int:
        found = -1
        for match in _SENTENCE_END.finditer(self._text, low, high):
            found = match.end() - 1
        return found

    def _last_space(self, low: int, high: int) -> int:
        match = _LAST_SPACE.search(self._text, low, high)
        return match.start() if match else -1


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
