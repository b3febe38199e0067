"""Splits a Document into token-bounded chunks that break at headings, paragraphs and sentences."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from raggity.core.protocols import Tokenizer
from raggity.core.types import Chunk, Document, Heading, Location
from raggity.documents.chunk_ids import ChunkIdAllocator, chunk_id, parent_id
from raggity.documents.chunk_locations import ChunkLocator
from raggity.documents.token_splitter import MAX_CHARS_PER_TOKEN, TokenSplitter

__all__ = ["MAX_CHARS_PER_TOKEN", "ChunkIdAllocator", "ChunkingSettings", "chunk_document", "chunk_id"]


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
    splitter = TokenSplitter(doc.text, tokenizer, settings.chunk_tokens)
    locate = ChunkLocator(doc)
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
