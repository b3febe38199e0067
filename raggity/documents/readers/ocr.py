"""Text read by OCR from images (.png, .jpg, .tif) and from the images of PDF pages with no text layer.

RapidOCR (the `ocr` extra) runs PaddleOCR's detection, orientation and recognition models on ONNX
Runtime, from the model files its wheel ships, checked against pinned hashes and handed over by path
so that it never downloads one (raggity/models/ocr_models.py). Pillow decodes the images, with a
pixel cap before any pixel is decoded: a few kilobytes of PNG can claim gigabytes of pixels.

A page or image that OCR finds no text on is reported by name (core.activity) rather than left
silently empty; so is a page past `[ingest] ocr_max_pages`.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from raggity.core.activity import Activity, report
from raggity.core.types import Anchor, Document, PageSpan
from raggity.documents.readers.errors import TooMuchTextError, UnreadableFileError
from raggity.documents.readers.ocr_options import OcrOptions
from raggity.inference.onnx_session import available_providers
from raggity.models.ocr_models import ocr_models

if TYPE_CHECKING:
    from PIL.Image import Image

# How a chunk's place is written (core/places.py): one image, or pages of a scan.
IMAGE_PLACE = "image (OCR)"
PAGE_PLACE = "page{s} {n} (OCR)"
OCR_MARK = "(OCR)"
PAGE_SEPARATOR = "\n\n"
# An A4 page at 600 dpi is 35 million pixels; RapidOCR scales every image to 2,000 pixels a side anyway.
MAX_PIXELS = 50_000_000
_REASON_CHARS = 80


class TextRecogniser(Protocol):
    def __call__(self, image: Image) -> list[str]:
        """The lines of text found in `image`, in reading order (none: no text found)."""
        ...


def read_image(data: bytes, source: str, *, options: OcrOptions, max_chars: int) -> Document:
    """An image file's text by OCR: one place (`image (OCR)`), or one per frame of a multi-page TIFF."""
    why_not = options.unavailable()
    if why_not is not None:
        raise UnreadableFileError(f"image: {why_not}")
    recognise = recogniser()
    image = _open(data)
    count = _frame_count(image)
    todo = min(count, options.max_pages)
    several = count > 1
    texts: list[tuple[int, str]] = []
    for number in range(1, todo + 1):
        where = f"OCR page {number}/{todo}" if several else "OCR"
        report(Activity(source, where))
        # One frame decoded at a time: a TIFF's pages are never all in memory at once.
        text = "\n".join(recognise(_decoded(image, number - 1))).strip()
        if text:
            texts.append((number, text))
        elif several:
            report(Activity(source, where, f"page {number}: OCR found no text"))
    if count > todo:
        unread = f"page {count}" if count == todo + 1 else f"pages {todo + 1}-{count}"
        report(Activity(source, "OCR", f"{unread} not read by OCR ([ingest] ocr_max_pages)"))
    if not texts:
        raise UnreadableFileError("OCR found no text in the image")
    return _document(source, texts, PAGE_PLACE if several else IMAGE_PLACE, max_chars)


def open_picture(data: bytes, *, min_side: int) -> Image | None:
    """A picture inside a document (readers/pictures.py), its header read but no pixel decoded; None
    when it is smaller than `min_side` pixels a side (an icon, a bullet, a rule)."""
    image = _open(data)
    width, height = image.size
    return None if min(width, height) < min_side else image


def picture_lines(image: Image) -> list[str]:
    """The lines OCR finds in a picture from open_picture (its first frame)."""
    return recogniser()(_decoded(image, 0))


def ocr_pages(source: str, pages: Sequence[tuple[int, Any]], *, options: OcrOptions) -> list[tuple[int, str]]:
    """(page number, text) of PDF pages (pypdf PageObjects) read by OCR from their images, at most
    `options.max_pages` of them; each page with none is reported by number."""
    recognise = recogniser()
    todo = pages[: options.max_pages]
    texts: list[tuple[int, str]] = []
    for count, (number, page) in enumerate(todo, start=1):
        where = f"OCR page {number} ({count}/{len(todo)})"
        report(Activity(source, where))
        try:
            images = _page_images(page)
        except UnreadableFileError as exc:
            report(Activity(source, where, f"page {number}: {exc}"))
            continue
        if not images:
            continue  # neither text nor an image: a blank page (pypdf cannot render vector drawings)
        lines = [line for image in images for line in recognise(image)]
        text = "\n".join(lines).strip()
        if text:
            texts.append((number, text))
        else:
            report(Activity(source, where, f"page {number}: OCR found no text"))
    if len(pages) > len(todo):
        first, last = pages[len(todo)][0], pages[-1][0]
        unread = f"page {first}" if first == last else f"pages {first}-{last}"
        report(Activity(source, "OCR", f"{unread} not read by OCR ([ingest] ocr_max_pages)"))
    return texts


@cache
def recogniser() -> TextRecogniser:
    """RapidOCR over the verified packaged models, made once per process (its sessions take a while)."""
    # onnxruntime is imported by raggity first, with its telemetry thread off (inference/onnx_session.py);
    # rapidocr then finds it loaded.
    available_providers()
    from rapidocr import RapidOCR  # noqa: PLC0415 - OpenCV and the models load only when OCR runs

    models = ocr_models()
    engine = RapidOCR(
        params={
            "Global.log_level": "critical",
            # Paths given: rapidocr's download step is never reached.
            "Det.model_path": str(models.detection),
            "Cls.model_path": str(models.orientation),
            "Rec.model_path": str(models.recognition),
        }
    )

    def recognise(image: Image) -> list[str]:
        # The full pipeline (detection, orientation, recognition) returns RapidOCROutput; its txts
        # is None when nothing was detected.
        return [str(text) for text in (getattr(engine(image), "txts", None) or ())]

    return recognise


def _document(source: str, texts: list[tuple[int, str]], place: str, max_chars: int) -> Document:
    parts: list[str] = []
    spans: list[PageSpan] = []
    length = 0
    for number, text in texts:
        if parts:
            parts.append(PAGE_SEPARATOR)
            length += len(PAGE_SEPARATOR)
        parts.append(text)
        spans.append(PageSpan(length, length + len(text), number))
        length += len(text)
        if length > max_chars:
            raise TooMuchTextError(max_chars)
    return Document(source, "".join(parts), "image", pages=tuple(spans), anchors=(Anchor(0, place),))


def _open(data: bytes) -> Image:
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415 - only when an image is read

    try:
        image = Image.open(io.BytesIO(data))
    except UnidentifiedImageError as exc:
        raise UnreadableFileError("not an image Pillow can read") from exc
    except Image.DecompressionBombError as exc:
        raise UnreadableFileError(f"image too large to OCR (more than {MAX_PIXELS:,} pixels)") from exc
    except Exception as exc:
        # Pillow raises OSError, ValueError, SyntaxError, TypeError ("Missing dimensions" for a
        # damaged TIFF: found by tests/fuzz/test_image_fuzz.py) and others for a damaged header.
        raise UnreadableFileError(f"corrupt image: {_short(exc)}") from exc
    return image


def _frame_count(image: Image) -> int:
    """How many frames (TIFF pages) `image` has; counting them reads every header, which may be damaged."""
    try:
        return int(getattr(image, "n_frames", 1))
    except Exception as exc:
        raise UnreadableFileError(f"corrupt image: {_short(exc)}") from exc


def _decoded(image: Image, frame: int) -> Image:
    try:
        image.seek(frame)
        width, height = image.size
        if width * height > MAX_PIXELS:
            raise UnreadableFileError(
                f"image too large to OCR ({width}x{height} pixels; at most {MAX_PIXELS:,})"
            )
        return image.convert("RGB")
    except UnreadableFileError:
        raise
    except Exception as exc:
        # Pillow raises OSError for a truncated file, and ValueError, SyntaxError, struct.error and
        # others for damaged headers and streams; KeyboardInterrupt is no Exception, so it still stops.
        raise UnreadableFileError(f"corrupt image: {_short(exc)}") from exc


def _page_images(page: Any) -> list[Image]:
    """The images drawn on a PDF page, decoded by pypdf (with Pillow), sizes checked first."""
    images: list[Image] = []
    try:
        _check_sizes(page)
        for found in page.images:
            image = found.image
            if image is not None:
                images.append(_decoded(image, 0))
    except UnreadableFileError:
        raise
    except Exception as exc:
        raise UnreadableFileError(f"image unreadable: {_short(exc)}") from exc
    return images


def _check_sizes(page: Any) -> None:
    """Refuses a page whose image XObjects claim more than MAX_PIXELS, before pypdf decodes them."""
    resources = page.get("/Resources")
    objects = resources.get_object().get("/XObject") if resources is not None else None
    if objects is None:
        return
    for ref in objects.get_object().values():
        xobject = ref.get_object()
        if xobject.get("/Subtype") == "/Image":
            width, height = int(xobject.get("/Width", 0)), int(xobject.get("/Height", 0))
            if width * height > MAX_PIXELS:
                raise UnreadableFileError(
                    f"image too large to OCR ({width}x{height} pixels; at most {MAX_PIXELS:,})"
                )


def _short(exc: BaseException) -> str:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return message if len(message) <= _REASON_CHARS else message[: _REASON_CHARS - 1] + "…"
