"""Documents of the structured kinds read from bytes in memory: a file's whole content, or a mail's
attachment. Each reader module loads on first use, as in readers/__init__.py."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import cast

from raggity.core.types import Document, DocumentKind
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS
from raggity.documents.readers.ocr_options import DEFAULT_OCR, OcrOptions

# kind -> (module under raggity.documents.readers, function taking (data, source, *, max_chars)).
BYTE_READERS: dict[str, tuple[str, str]] = {
    "docx": ("docx", "docx_document"),
    "pptx": ("pptx", "pptx_document"),
    "xlsx": ("xlsx", "xlsx_document"),
    "csv": ("tabular", "csv_document"),
    "ipynb": ("ipynb", "ipynb_document"),
    "mail": ("mail", "mail_document"),
    "epub": ("epub", "epub_document"),
    "odt": ("odf", "odt_document"),
    "ods": ("odf", "ods_document"),
    "odp": ("odf", "odp_document"),
    "rtf": ("rtf", "rtf_document"),
}

# Kinds whose readers also read the pictures they hold by OCR (readers/pictures.py): they take `ocr`.
PICTURE_KINDS = frozenset({"docx", "pptx", "mail"})

ByteReader = Callable[..., Document]


def byte_reader(kind: DocumentKind | str | None) -> ByteReader | None:
    """The function that reads `kind` from bytes, or None for kinds read from files only."""
    found = BYTE_READERS.get(kind or "")
    if found is None:
        return None
    module = importlib.import_module(f"raggity.documents.readers.{found[0]}")
    return cast(ByteReader, getattr(module, found[1]))


def read_bytes(
    kind: str, data: bytes, source: str, *, max_chars: int = DEFAULT_MAX_CHARS, ocr: OcrOptions = DEFAULT_OCR
) -> Document:
    """`data` read as `kind`; the kinds that hold pictures get the OCR options for them."""
    reader = byte_reader(kind)
    if reader is None:
        raise ValueError(f"no byte reader for {kind!r}")
    if kind in PICTURE_KINDS:
        return reader(data, source, max_chars=max_chars, ocr=ocr)
    return reader(data, source, max_chars=max_chars)
