"""Pictures inside documents (a screenshot on a slide, a scan pasted into a Word file, a figure in an
e-book, an image attached to a mail) read by the same OCR as image files, when `[ingest] ocr` allows.

At most `ocr_max_pages` pictures are read from one file, and pictures too small to hold a line of
text (bullets, spacers, logos under MIN_SIDE pixels a side) are passed over before any pixel is
decoded. A picture OCR finds no text in is not reported: most pictures in documents are photographs
and drawings, unlike a scanned page, whose blankness is news. A damaged one is reported by name.
Nothing is fetched: only pictures stored inside the file are read (package.py).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from raggity.core.activity import Activity, report
from raggity.documents.readers.errors import UnreadableFileError
from raggity.documents.readers.ocr_options import OcrOptions

# How a picture's text is marked in its place (core/places.py): `deck.pptx:slide 7 (image, OCR)`.
PICTURE_MARK = " (image, OCR)"
# A line of 10-pixel text fits in 24 pixels; smaller pictures are icons and rules.
MIN_SIDE = 24
# Formats Pillow reads that pictures in documents come in; vector ones (EMF, WMF, SVG) hold their
# text as text, not pixels, and are not OCR's to read.
PICTURE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".webp"})


def is_picture(name: str) -> bool:
    return PurePosixPath(name.lower()).suffix in PICTURE_SUFFIXES


class Pictures:
    """The OCR'd text of one file's pictures, at most `options.max_pages` of them."""

    def __init__(self, source: str, options: OcrOptions) -> None:
        self._source = source
        self._options = options
        self._enabled = options.unavailable() is None
        self._read = 0
        self._passed = 0

    def text(self, name: str, data: bytes) -> str:
        """The lines OCR finds in picture `name` (bytes `data`); "" when it is not read or holds none."""
        if not self._enabled or not data:
            return ""
        # OCR loads only when a picture is read.
        from raggity.documents.readers.ocr import open_picture, picture_lines  # noqa: PLC0415

        short = PurePosixPath(name).name
        try:
            image = open_picture(data, min_side=MIN_SIDE)
        except UnreadableFileError as exc:
            report(Activity(self._source, "OCR picture", f"picture {short}: {exc}"))
            return ""
        if image is None:
            return ""  # too small to hold a line of text: not counted against the cap
        if self._read >= self._options.max_pages:
            self._passed += 1
            return ""
        self._read += 1
        where = f"OCR picture {self._read} ({short})"
        report(Activity(self._source, where))
        try:
            return "\n".join(picture_lines(image)).strip()
        except UnreadableFileError as exc:
            report(Activity(self._source, where, f"picture {short}: {exc}"))
            return ""

    def finish(self) -> None:
        """Says how many pictures the cap left unread, if any."""
        if self._passed:
            report(
                Activity(
                    self._source,
                    "OCR",
                    f"{self._passed} more pictures not read by OCR ([ingest] ocr_max_pages)",
                )
            )
