"""Immutable values passed between pipeline stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal
from urllib.parse import quote

from raggity.core.places import render_place

if TYPE_CHECKING:
    from raggity.core.vectors import Vector

DocumentKind = Literal[
    "markdown",
    "text",
    "rst",
    "html",
    "pdf",
    "code",
    # Documents whose places are slides, sheets, cells, messages or chapters (core/places.py).
    "docx",
    "pptx",
    "xlsx",
    "csv",
    "ipynb",
    "mail",
    "epub",
    "odt",
    "ods",
    "odp",
    "rtf",
    # Text read by OCR from an image file (ingest/readers/ocr.py); its place is `image (OCR)`.
    "image",
]


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading that starts at `offset` (a character offset into Document.text)."""

    offset: int
    level: int
    title: str


@dataclass(frozen=True, slots=True)
class PageSpan:
    """Characters [start, end) of Document.text came from page `page` (1-based)."""

    start: int
    end: int
    page: int


@dataclass(frozen=True, slots=True)
class Anchor:
    """An HTML fragment id (an element `id` or `<a name>`) whose element starts at `offset` of Document.text.

    An empty name marks text that no anchor holds (a heading without one): it opens at the page."""

    offset: int
    name: str


@dataclass(frozen=True, slots=True)
class TextDocument:
    """A document held in memory (a corpus record, a generated page), indexed under `name` by
    `Raggity.index_documents`; `title`, when given, is its heading."""

    name: str
    text: str
    title: str = ""


@dataclass(frozen=True, slots=True)
class Document:
    """Plain text read from one file, or one segment of a very large file.

    `line_offset` is the number of file lines before this segment, so that chunk line
    ranges stay exact when a large file is streamed in pieces.
    """

    source: str
    text: str
    kind: DocumentKind
    headings: tuple[Heading, ...] = ()
    pages: tuple[PageSpan, ...] = ()
    line_offset: int = 0
    anchors: tuple[Anchor, ...] = ()


@dataclass(frozen=True, slots=True)
class Location:
    """Where a chunk sits in its file, in terms a person can open it by (see docs/citations.md).

    - Text, Markdown, reStructuredText, code: `line_start`-`line_end`, 1-based inclusive lines of the file.
    - PDF: `page_start`-`page_end`; the lines number the extracted text and are never shown.
    - HTML: `anchor`, the fragment id nearest before the chunk (None: the top of the page). HTML text is
      extracted, so it has no file lines: `line_start` and `line_end` are 0.
    - Slides, sheets, notebooks, mail, e-books, word processor files: `page_start`-`page_end` number
      the places (slides, rows, cells...) and `anchor` is the template that names them
      (core/places.py): `slide 7`, `Costs!A14:D30`, `heading "Budget" (paragraph 14)`.
    """

    line_start: int
    line_end: int
    page_start: int | None = None
    page_end: int | None = None
    anchor: str | None = None

    @property
    def has_lines(self) -> bool:
        """Whether the line range numbers lines of the file (false for HTML and PDF)."""
        return self.line_start > 0 and self.page_start is None

    def through(self, last: Location) -> Location:
        """The span from this location to `last` (a later chunk of the same file)."""
        return Location(self.line_start, last.line_end, self.page_start, last.page_end, self.anchor)

    def cite(self, source: str) -> str:
        """The citation a person can open: `notes.md:lines 3-9`, `copy.html#copy.deepcopy`, `a.pdf:page 2`."""
        where = str(self)
        if not where or where.startswith("#"):
            return source + where
        return f"{source}:{where}"

    def __str__(self) -> str:
        if self.page_start is not None:
            if self.anchor:
                # A paged document has no fragment ids: its anchor is how its places are written.
                return render_place(self.anchor, self.page_start, self.page_end or self.page_start)
            if self.page_end is None or self.page_end == self.page_start:
                return f"page {self.page_start}"
            return f"pages {self.page_start}-{self.page_end}"
        if self.anchor:
            # Percent-encoded as in a URL: the citation opens in a browser, and an id from a
            # document cannot smuggle spaces, markup or control characters into the terminal.
            return "#" + quote(self.anchor, safe=_FRAGMENT_SAFE)
        if self.line_start <= 0:
            return ""
        if self.line_start == self.line_end:
            return f"line {self.line_start}"
        return f"lines {self.line_start}-{self.line_end}"


# Characters RFC 3986 allows unescaped in a URL fragment, less "[", "]" (rich markup) and "'".
_FRAGMENT_SAFE = "!$&()*+,;=:@/?-._~"


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable unit of text. `id` is derived from source path and content, so it is stable."""

    id: str
    source: str
    text: str
    heading: str
    location: Location
    parent_id: str
    ordinal: int
    n_tokens: int

    @property
    def search_text(self) -> str:
        """What BM25 and the embedder see: the heading trail adds context a lone chunk lacks."""
        if self.heading and not self.text.lstrip().startswith(self.heading.rsplit(" > ", 1)[-1]):
            return f"{self.heading}\n{self.text}"
        return self.text


@dataclass(frozen=True, slots=True)
class Query:
    """A query as retrievers see it: text for BM25, an optional unit vector for dense search.

    `label` names where the query came from ("question", "hyde", "step-back", "expand-1", ...),
    so that a trace can say which list each candidate came from. `lexical` is False for texts that
    only dense search should see (a HyDE passage is not something to match words against).
    """

    text: str
    label: str = "question"
    vector: Vector | None = field(default=None, compare=False)
    lexical: bool = True


@dataclass(frozen=True, slots=True)
class Candidate:
    """A chunk under consideration for the answer, with every score the pipeline gave it."""

    chunk: Chunk
    score: float
    rrf_score: float = 0.0
    dense_rank: int | None = None
    bm25_rank: int | None = None
    dense_cosine: float | None = None
    rerank_score: float | None = None
    origins: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Citation:
    """A numbered source as shown to the user. `supported` is False when the citing sentence
    shares too little with the cited text to count as evidence. `warning` is non-empty when the
    source's text gives instructions to the reader or the model (possible prompt injection)."""

    n: int
    source: str
    location: Location
    text: str
    supported: bool = True
    warning: str = ""
    # Sentences of the answer this source says in other words: attached by meaning (the embedder)
    # after the answer was shown, so they carry no [n] in its text; listed with the source instead.
    paraphrases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Passage:
    """A passage the pipeline read but did not answer from, shown under a decline so that the reader
    can see where it looked. Never a citation: nothing in it is claimed to support an answer.
    `snippet` is its one line that shares most words with the question."""

    source: str
    location: Location
    heading: str
    snippet: str


@dataclass(frozen=True, slots=True)
class StageTrace:
    """What one pipeline stage did: counts in and out, wall time, and free-form details."""

    stage: str
    ms: float
    n_in: int
    n_out: int
    detail: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Answer:
    question: str
    text: str
    abstained: bool
    citations: tuple[Citation, ...]
    trace: tuple[StageTrace, ...]
    cached: bool = False
    unsupported_sentences: tuple[str, ...] = ()
    refused: bool = False
    # Every source the model was given, numbered as in its prompt (supported: whether a sentence of
    # the answer rests on it). `citations` holds only those attached to sentences: when none is, the
    # reader is told to check the sources, and these are the ones to check.
    sources_read: tuple[Citation, ...] = ()
    # When it declined (abstained or refused): the best few passages retrieval found, so that a
    # decline still shows where to read. Empty when it answered.
    closest: tuple[Passage, ...] = ()
    # Files this answer rests on (cited, read or closest) that changed or vanished since they were
    # indexed; and, on a decline, how many files in the indexed folders are newer than the index.
    changed_sources: tuple[str, ...] = ()
    newer_files: int = 0
    # A reply of which no sentence has a source (by its words or in other words): declined as no
    # answer from the documents, and kept here for the record (`rag ask` has already streamed it).
    unsupported_reply: str = ""

    @property
    def declined(self) -> bool:
        return self.abstained or self.refused

    @property
    def verified(self) -> bool:
        """Whether a source supports at least one sentence of the answer."""
        return any(c.supported for c in self.citations)


ABSTAIN_MESSAGE = "I don't have enough information in the indexed documents to answer that."
