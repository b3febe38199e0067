"""OCR with the real RapidOCR models: a page of text rendered with a real TrueType font, as a PNG and as
an image-only PDF page, comes back as words cited with the OCR mark; without OCR, and for hostile
images, the file is skipped with one line. Each OCR'd page costs seconds on 2 cores: keep them few."""

from __future__ import annotations

import io
import re
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont
from pypdf import PdfReader, PdfWriter
from pypdf.generic import NameObject, NumberObject

from raggity.core.activity import Activity, listening
from raggity.core.places import place_range
from raggity.core.types import Chunk, Document
from raggity.documents.chunker import ChunkingSettings, chunk_document
from raggity.documents.readers import OcrOptions, UnreadableFileError, read_file
from tests.ingest.test_pdf import make_pdf

FONTS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans.ttf")
LINES = ["The lighthouse budget is 4,200 euros.", "Ada polishes the lamp on Tuesdays."]


class _Words:
    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def _font() -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for candidate in FONTS:
        if Path(candidate).exists():
            return ImageFont.truetype(candidate, 32)
    return ImageFont.load_default(size=32)  # Pillow's bundled scalable font


def page(lines: list[str]) -> Image.Image:
    """A strip of a page: black type on white, as a scanner gives it (small, so OCR stays quick)."""
    image = Image.new("RGB", (900, 80 + 60 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        draw.text((40, 40 + 60 * number), line, fill="black", font=_font())
    return image


def read(path: Path, options: OcrOptions | None = None) -> tuple[Document, list[Activity]]:
    heard: list[Activity] = []
    with listening(heard.append):
        [document] = list(read_file(path, ocr=options or OcrOptions()))
    return document, heard


def chunks(document: Document) -> list[Chunk]:
    return chunk_document(document, _Words(), ChunkingSettings(chunk_tokens=8, parent_tokens=8))


def reason(path: Path, options: OcrOptions | None = None) -> str:
    with pytest.raises(UnreadableFileError) as caught:
        list(read_file(path, ocr=options or OcrOptions()))
    return str(caught.value)


def test_an_image_is_read_by_ocr_and_cited_as_an_image(tmp_path: Path) -> None:
    path = tmp_path / "note.png"
    page(LINES).save(path)
    document, heard = read(path)
    assert "lighthouse budget is 4,200 euros" in document.text
    assert "Ada polishes the lamp" in document.text
    [budget] = [c for c in chunks(document) if "4,200" in c.text]
    assert budget.location.cite("note.png") == "note.png:image (OCR)"
    # The ingest bar is told which file OCR is on.
    assert [(a.source, a.doing) for a in heard] == [(str(path), "OCR")]


def test_a_pdf_page_without_text_is_read_by_ocr_and_a_blank_scan_reported(tmp_path: Path) -> None:
    scans = io.BytesIO()
    page(LINES).save(
        scans, format="PDF", save_all=True, append_images=[Image.new("RGB", (900, 200), "white")]
    )
    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(make_pdf([["Alpha opening page with a text layer"]]))))
    writer.append(PdfReader(scans))
    path = tmp_path / "scan.pdf"
    with path.open("wb") as out:
        writer.write(out)
    document, heard = read(path)
    cited: dict[str, str] = {}
    for chunk in chunks(document):
        where = chunk.location.cite("scan.pdf")
        cited[where] = f"{cited.get(where, '')} {chunk.text}".strip()
    assert cited["scan.pdf:page 1"].startswith("Alpha opening page")
    assert "lighthouse budget is 4,200 euros" in cited["scan.pdf:page 2 (OCR)"]
    assert "Ada polishes the lamp on Tuesdays" in cited["scan.pdf:page 2 (OCR)"]
    assert set(cited) == {"scan.pdf:page 1", "scan.pdf:page 2 (OCR)"}
    # Page 3 (a white scan) is reported by number, not left silently empty; the bar named each page.
    assert [a.problem for a in heard if a.problem] == ["page 3: OCR found no text"]
    assert [a.doing for a in heard if not a.problem] == ["OCR page 2 (1/2)", "OCR page 3 (2/2)"]


def test_the_page_cap_is_reported_and_a_pdf_of_blank_scans_skipped(tmp_path: Path) -> None:
    blank = Image.new("RGB", (300, 100), "white")
    path = tmp_path / "blank.pdf"
    blank.save(path, format="PDF", save_all=True, append_images=[blank, blank])
    heard: list[Activity] = []
    with listening(heard.append), pytest.raises(UnreadableFileError) as caught:
        list(read_file(path, ocr=OcrOptions(max_pages=1)))
    assert str(caught.value) == "OCR found no text on 3 page(s) without a text layer"
    assert [a.problem for a in heard if a.problem] == [
        "page 1: OCR found no text",
        "pages 2-3 not read by OCR ([ingest] ocr_max_pages)",
    ]


def test_ocr_off_skips_images_and_scans_with_one_line(tmp_path: Path) -> None:
    off = OcrOptions(mode="off")
    image = tmp_path / "photo.jpg"
    page(LINES).save(image)
    assert reason(image, off) == 'image: OCR is off ([ingest] ocr = "off")'
    scan = tmp_path / "scan.pdf"
    page(LINES).save(scan, format="PDF")
    assert reason(scan, off) == 'no extractable text (scanned PDF?): OCR is off ([ingest] ocr = "off")'


def _png_claiming(width: int, height: int) -> bytes:
    """A PNG whose header claims `width` x `height` pixels, with a few bytes of data."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0" * 64))
        + chunk(b"IEND", b"")
    )


def test_hostile_images_are_skipped_with_one_line(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(_png_claiming(8000, 8000))  # 64 million pixels: under Pillow's own limit
    assert reason(bomb) == "image too large to OCR (8000x8000 pixels; at most 50,000,000)"
    huge = tmp_path / "huge.png"
    huge.write_bytes(_png_claiming(100_000, 100_000))  # past Pillow's decompression-bomb error
    assert reason(huge) == "image too large to OCR (more than 50,000,000 pixels)"
    whole = io.BytesIO()
    page(LINES).save(whole, format="PNG")
    truncated = tmp_path / "truncated.png"
    truncated.write_bytes(whole.getvalue()[: len(whole.getvalue()) // 2])
    assert reason(truncated).startswith("corrupt image: ")
    (tmp_path / "fake.tiff").write_bytes(b"not an image at all")
    assert reason(tmp_path / "fake.tiff") == "not an image Pillow can read"


def test_a_multi_page_tiff_is_read_page_by_page_up_to_the_cap(tmp_path: Path) -> None:
    blank = Image.new("RGB", (300, 100), "white")
    path = tmp_path / "fax.tiff"
    blank.save(path, save_all=True, append_images=[blank, blank])
    heard: list[Activity] = []
    with listening(heard.append), pytest.raises(UnreadableFileError) as caught:
        list(read_file(path, ocr=OcrOptions(max_pages=2)))
    assert str(caught.value) == "OCR found no text in the image"
    assert [a.doing for a in heard if not a.problem] == ["OCR page 1/2", "OCR page 2/2"]
    assert [a.problem for a in heard if a.problem] == [
        "page 1: OCR found no text",
        "page 2: OCR found no text",
        "page 3 not read by OCR ([ingest] ocr_max_pages)",
    ]


def test_a_scanned_page_whose_image_claims_too_many_pixels_is_reported_not_decoded(tmp_path: Path) -> None:
    scan = io.BytesIO()
    page(LINES).save(scan, format="PDF")
    writer = PdfWriter(clone_from=PdfReader(scan))
    for ref in writer.pages[0]["/Resources"]["/XObject"].values():
        image = ref.get_object()
        image[NameObject("/Width")] = NumberObject(100_000)
        image[NameObject("/Height")] = NumberObject(100_000)
    path = tmp_path / "bomb.pdf"
    with path.open("wb") as out:
        writer.write(out)
    heard: list[Activity] = []
    with listening(heard.append), pytest.raises(UnreadableFileError):
        list(read_file(path))
    assert [a.problem for a in heard if a.problem] == [
        "page 1: image too large to OCR (100000x100000 pixels; at most 50,000,000)"
    ]


def test_ocr_places_are_read_back_by_rag_show() -> None:
    # `rag show` takes a printed citation back through the same template (core/places.py).
    assert place_range("page{s} {n} (OCR)", "page 4 (OCR)") == (4, 4)
    assert place_range("page{s} {n} (OCR)", "pages 2-3 (OCR)") == (2, 3)
    assert place_range("page{s} {n} (OCR)", "page 4") is None
    assert place_range("image (OCR)", "image (OCR)") is not None
