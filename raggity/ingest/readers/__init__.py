"""Turn one file into Documents: pick the reader for its kind and report why a file cannot be read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from raggity.core.types import Document
from raggity.ingest.readers.errors import UnreadableFileError
from raggity.ingest.readers.kinds import kind_of

__all__ = ["UnreadableFileError", "read_file"]

DEFAULT_SEGMENT_CHARS = 4_000_000


def read_file(path: Path, *, segment_chars: int = DEFAULT_SEGMENT_CHARS) -> Iterator[Document]:
    """Documents read from `path`: usually one, several when a large text or code file is streamed.

    Raises UnreadableFileError while iterating when the file holds no usable text; a streamed file
    may raise it after some segments, for instance when the file vanishes half-way.
    """
    if segment_chars < 1:
        raise ValueError(f"segment_chars must be positive, got {segment_chars}")
    return _read(path, segment_chars)


def _read(path: Path, segment_chars: int) -> Iterator[Document]:
    # Readers are imported on first use: pypdf alone costs more start-up time than
    # commands that never read a file (search, ask) can afford.
    kind = kind_of(path)
    if kind == "markdown":
        from raggity.ingest.readers.markdown import read_markdown

        yield read_markdown(path)
    elif kind == "rst":
        from raggity.ingest.readers.rst import read_rst

        yield read_rst(path)
    elif kind == "html":
        from raggity.ingest.readers.html import read_html

        yield read_html(path)
    elif kind == "pdf":
        from raggity.ingest.readers.pdf import read_pdf

        yield read_pdf(path)
    elif kind == "code":
        from raggity.ingest.readers.code import read_code

        yield from read_code(path, segment_chars=segment_chars)
    else:
        # Unknown names are read as plain text: the caller asked for this file by name.
        from raggity.ingest.readers.text import read_text_documents

        yield from read_text_documents(path, kind="text", segment_chars=segment_chars)
