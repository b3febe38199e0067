"""PDF files, through pypdf: the text of every page that has some, with the page each part came from.

Page texts are joined with a blank line ("\\n\\n"); each PageSpan covers exactly one page's text,
never the separator. A page whose text cannot be extracted is left out rather than failing the file.
A page with no text layer (a scan) is read by OCR from its images when [ingest] ocr allows
(readers/ocr.py); its place is written `page 4 (OCR)`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import BinaryIO

from pypdf import PdfReader
from pypdf.errors import DependencyError

from raggity.core.types import Anchor, Document, PageSpan
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS, TooMuchTextError, UnreadableFileError
from raggity.documents.readers.ocr_options import DEFAULT_OCR, OcrOptions
from raggity.documents.readers.source import open_source

PAGE_SEPARATOR = "\n\n"
OCR_PAGE_PLACE = "page{s} {n} (OCR)"
_REASON_CHARS = 80

# pypdf logs a warning for every recoverable flaw it meets; raggity reports one reason per file instead.
logging.getLogger("pypdf").setLevel(logging.CRITICAL)


def read_pdf(
    path: Path, *, max_chars: int = DEFAULT_MAX_CHARS, ocr: OcrOptions = DEFAULT_OCR, name: str = ""
) -> Document:
    """`name`: the file as the user knows it, for the OCR progress and its reports (default `path`)."""
    budget = _TextBudget(max_chars)
    with open_source(path) as stream:
        texts, scanned = _page_texts(stream, budget)
        read_by_ocr = _ocr(name or str(path), scanned, ocr, budget, has_text=bool(texts))
    pages = sorted([(number, text, False) for number, text in texts] + read_by_ocr)
    parts: list[str] = []
    spans: list[PageSpan] = []
    anchors: list[Anchor] = []
    length = 0
    for number, page_text, by_ocr in pages:
        if parts:
            parts.append(PAGE_SEPARATOR)
            length += len(PAGE_SEPARATOR)
        if by_ocr != bool(anchors and anchors[-1].name):
            # The place template changes here; an empty one is a plain `page N` (core.types.Location).
            anchors.append(Anchor(length, OCR_PAGE_PLACE if by_ocr else ""))
        parts.append(page_text)
        spans.append(PageSpan(start=length, end=length + len(page_text), page=number))
        length += len(page_text)
    return Document(
        source=str(path), text="".join(parts), kind="pdf", pages=tuple(spans), anchors=tuple(anchors)
    )


def _ocr(
    source: str, scanned: list[tuple[int, object]], ocr: OcrOptions, budget: _TextBudget, *, has_text: bool
) -> list[tuple[int, str, bool]]:
    """The pages without a text layer, read by OCR. Without OCR (off or not installed) they are left
    out, and a PDF with no text at all is skipped with the reason."""
    if not scanned:
        return []
    why_not = ocr.unavailable()
    if why_not is not None:
        if not has_text:
            raise UnreadableFileError(f"no extractable text (scanned PDF?): {why_not}")
        return []
    from raggity.documents.readers.ocr import ocr_pages  # noqa: PLC0415 - OCR loads only for a scan

    found = ocr_pages(source, scanned, options=ocr)
    for _, text in found:
        budget.visit(text)
    if not found and not has_text:
        raise UnreadableFileError(f"OCR found no text on {len(scanned)} page(s) without a text layer")
    return [(number, text, True) for number, text in found]


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


def _page_texts(
    stream: BinaryIO, budget: _TextBudget
) -> tuple[list[tuple[int, str]], list[tuple[int, object]]]:
    """(1-based page number, stripped text) of every page with text, and (number, page) of every page
    that extracted cleanly to no text but draws an image (a scan)."""
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
    scanned: list[tuple[int, object]] = []
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
        elif _draws_objects(page):
            scanned.append((number, page))
    if not texts and not scanned:
        if first_failure is not None:
            raise UnreadableFileError(f"corrupt PDF: {_short(first_failure)}") from first_failure
        raise UnreadableFileError("no extractable text (scanned PDF?)")
    return texts, scanned


def _draws_objects(page: object) -> bool:
    """Whether a page without text draws images or forms (a scan to OCR), not a blank page."""
    try:
        resources = page.get("/Resources")  # type: ignore[attr-defined]
        objects = resources.get_object().get("/XObject") if resources is not None else None
        return bool(objects is not None and len(objects.get_object()))
    except Exception:
        return False  # a damaged resource dictionary: nothing OCR could find either


def _clean(raw: str) -> str:
    # Some fonts map glyphs to NUL; newlines are normalised as for text files.
    text = raw.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    return text.strip()


def _short(exc: BaseException) -> str:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if len(message) > _REASON_CHARS:
        message = message[: _REASON_CHARS - 1] + "…"
    return message
