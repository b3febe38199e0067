"""Turn one file into Documents: pick the reader for its kind and report why a file cannot be read."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from raggity.core.types import Document
from raggity.documents.readers.embedded import BYTE_READERS, read_bytes
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS, TooMuchTextError, UnreadableFileError
from raggity.documents.readers.kinds import kind_of
from raggity.documents.readers.ocr_options import DEFAULT_OCR, OcrOptions
from raggity.documents.readers.source import open_source

__all__ = ["DEFAULT_MAX_CHARS", "OcrOptions", "TooMuchTextError", "UnreadableFileError", "read_file"]

DEFAULT_SEGMENT_CHARS = 4_000_000
# The binary formats of Office 97-2003, and what to convert each to. No small, well-kept library reads
# their text (xlrd reads .xls only, antiword is C); LibreOffice converts all three in one command.
_LEGACY = {
    ".doc": ("Word 97-2003", "docx"),
    ".xls": ("Excel 97-2003", "xlsx"),
    ".ppt": ("PowerPoint 97-2003", "pptx"),
}
_ZIP_MAGIC = b"PK\x03\x04"


def read_file(
    path: Path,
    *,
    segment_chars: int = DEFAULT_SEGMENT_CHARS,
    max_chars: int = DEFAULT_MAX_CHARS,
    name: Path | None = None,
    ocr: OcrOptions = DEFAULT_OCR,
) -> Iterator[Document]:
    """Documents read from `path`: usually one, several when a large text or code file is streamed.

    Raises UnreadableFileError while iterating when the file holds no usable text; a streamed file
    may raise it after some segments, for instance when the file vanishes half-way. Raises
    TooMuchTextError, before yielding anything where it can tell, when the text passes `max_chars`.
    `name`: the path the documents are indexed under (and the kind judged by), when `path` is its
    real path. The file is opened without following a link (readers.source.open_source).
    `ocr`: whether images and PDF pages without a text layer are read by OCR ([ingest] ocr).
    """
    if segment_chars < 1 or max_chars < 1:
        raise ValueError(f"segment_chars and max_chars must be positive, got {segment_chars}, {max_chars}")
    documents = _read(path, kind_of(name or path), segment_chars, max_chars, ocr, str(name or path))
    if name is None or name == path:
        return documents
    return (replace(document, source=str(name)) for document in documents)


def _read(
    path: Path, kind: str | None, segment_chars: int, max_chars: int, ocr: OcrOptions, source: str
) -> Iterator[Document]:
    # Readers are imported on first use: pypdf alone costs more start-up time than
    # commands that never read a file (search, ask) can afford.
    if kind == "markdown":
        from raggity.documents.readers.markdown import read_markdown  # noqa: PLC0415 - a parser loads only for its format

        yield read_markdown(path, max_chars=max_chars)
    elif kind == "rst":
        from raggity.documents.readers.rst import read_rst  # noqa: PLC0415 - a parser loads only for its format

        yield read_rst(path, max_chars=max_chars)
    elif kind == "html":
        from raggity.documents.readers.html import read_html  # noqa: PLC0415 - a parser loads only for its format

        yield read_html(path, max_chars=max_chars)
    elif kind == "pdf":
        from raggity.documents.readers.pdf import read_pdf  # noqa: PLC0415 - a parser loads only for its format

        yield read_pdf(path, max_chars=max_chars, ocr=ocr, name=source)
    elif kind == "image":
        from raggity.documents.readers.ocr import read_image  # noqa: PLC0415 - OCR loads only for its format

        why_not = ocr.unavailable()
        if why_not is not None:
            raise UnreadableFileError(f"image: {why_not}")  # said before a byte is read
        with open_source(path) as stream:
            data = stream.read()
        yield read_image(data, source, options=ocr, max_chars=max_chars)
    elif kind is not None and kind in BYTE_READERS:
        # Structured kinds (Office, OpenDocument, notebooks, mail, e-books) are read whole from bytes,
        # so that a mail's attachments go through the same readers (readers/embedded.py).
        with open_source(path) as stream:
            data = stream.read()
        legacy_office(source, data)
        yield read_bytes(kind, data, source, max_chars=max_chars, ocr=ocr)
    elif kind == "code":
        from raggity.documents.readers.code import read_code  # noqa: PLC0415 - a parser loads only for its format

        yield from read_code(path, segment_chars=segment_chars, max_chars=max_chars)
    else:
        # Unknown names are read as plain text: the caller asked for this file by name.
        from raggity.documents.readers.text import read_text_documents  # noqa: PLC0415 - a parser loads only for its format

        yield from read_text_documents(path, kind="text", segment_chars=segment_chars, max_chars=max_chars)


def legacy_office(source: str, data: bytes) -> None:
    """Raises the one-line skip for a Word, Excel or PowerPoint 97-2003 file, saying how to convert it;
    a file so named that is really a zip package (a renamed .docx) is read as what it is."""
    found = _LEGACY.get(Path(source).suffix.lower())
    if found is None or data.startswith(_ZIP_MAGIC):
        return
    what, modern = found
    raise UnreadableFileError(
        f"{what} file: not read; convert it to .{modern} (libreoffice --headless --convert-to {modern} FILE)"
    )
