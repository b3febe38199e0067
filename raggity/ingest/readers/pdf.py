"""PDF files, through pypdf: the text of every page that has some, with the page each part came from.

Page texts are joined with a blank line ("\\n\\n"); each PageSpan covers exactly one page's text,
never the separator. A page whose text cannot be extracted is left out rather than failing the file.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import BinaryIO

from pypdf import PdfReader
from pypdf.errors import DependencyError

from raggity.core.types import Document, PageSpan
from raggity.ingest.readers.errors import DEFAULT_MAX_CHARS, TooMuchTextError, UnreadableFileError
from raggity.ingest.readers.source import open_source

PAGE_SEPARATOR = "\n\n"
_REASON_CHARS = 80

# pypdf logs a warning for every recoverable flaw it meets; raggity reports one reason per file instead.
logging.getLogger("pypdf").setLevel(logging.CRITICAL)


def read_pdf(path: Path, *, max_chars: int = DEFAULT_MAX_CHARS) -> Document:
    with open_source(path) as stream:
        pages = _page_texts(stream, _TextBudget(max_chars))
    parts: list[str] = []
    spans: list[PageSpan] = []
    length = 0
    for number, page_text in pages:
        if parts:
            parts.append(PAGE_SEPARATOR)
            length += len(PAGE_SEPARATOR)
        parts.append(page_text)
        spans.append(PageSpan(start=length, end=length + len(page_text), page=number))
        length += len(page_text)
    return Document(source=str(path), text="".join(parts), kind="pdf", pages=tuple(spans))


class _TextBudget:
    """Counts extracted text as pypdf produces it and stops the extraction when it passes the bound.

    Counting inside the extraction matters: a few kilobytes of nested form XObjects can expand to
    tens of millions of characters on one page.
    """

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._used = 0

    def visit(self, text: str, *_: object) -> None:
        self._used += len(text)
        if self._used > self.max_chars:
            raise TooMuchTextError(self.max_chars)


def _page_texts(stream: BinaryIO, budget: _TextBudget) -> list[tuple[int, str]]:
    """(1-based page number, stripped text) of every page with text."""
    if not stream.read(1):
        raise UnreadableFileError("empty file")
    stream.seek(0)
    try:
        reader = PdfReader(stream, strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFileError("encrypted PDF")
        pages = list(reader.pages)
    except (UnreadableFileError, OSError):
        raise
    except DependencyError as exc:
        # AES-encrypted files need the optional `cryptography` package, even with an empty password.
        raise UnreadableFileError(f"encrypted PDF: {_short(exc)}") from exc
    except Exception as exc:
        # pypdf raises many exception types for damaged files (PdfReadError, KeyError, ValueError,
        # RecursionError...); KeyboardInterrupt and SystemExit are not Exceptions, so they still stop.
        raise UnreadableFileError(f"corrupt PDF: {_short(exc)}") from exc
    texts: list[tuple[int, str]] = []
    first_failure: Exception | None = None
    for number, page in enumerate(pages, start=1):
        try:
            raw = page.extract_text(visitor_text=budget.visit)
        except (OSError, TooMuchTextError):
            raise
        except Exception as exc:
            first_failure = first_failure or exc
            continue
        text = _clean(raw)
        if text:
            texts.append((number, text))
    if not texts:
        if first_failure is not None:
            raise UnreadableFileError(f"corrupt PDF: {_short(first_failure)}") from first_failure
        raise UnreadableFileError("no extractable text (scanned PDF?)")
    return texts


def _clean(raw: str) -> str:
    # Some fonts map glyphs to NUL; newlines are normalised as for text files.
    text = raw.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    return text.strip()


def _short(exc: BaseException) -> str:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if len(message) > _REASON_CHARS:
        message = message[: _REASON_CHARS - 1] + "…"
    return message
