"""Pictures inside documents, read by OCR (readers/pictures.py): a damaged, huge or endless picture
costs the file its picture, never its text, and never a traceback; how many are read is capped.

The seed is a real deck written by python-pptx with one picture of drawn text on its slide."""

from __future__ import annotations

import email.policy
import io
import struct
import zipfile
import zlib
from email.message import EmailMessage
from pathlib import Path

import pptx  # type: ignore[import-untyped,import-not-found,unused-ignore]
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image, ImageDraw, ImageFont

from raggity.core.activity import Activity, listening
from raggity.documents.readers import OcrOptions, UnreadableFileError, read_file
from tests.fuzz.conftest import FUZZ_FEW, damaged

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _picture(text: str) -> bytes:
    font = ImageFont.truetype(FONT, 28) if Path(FONT).exists() else ImageFont.load_default(size=28)
    image = Image.new("L", (420, 70), 255)
    ImageDraw.Draw(image).text((12, 16), text, fill=0, font=font)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _deck(*pictures: bytes) -> bytes:
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Harbour plan"
    for picture in pictures:
        slide.shapes.add_picture(io.BytesIO(picture), 0, 0)
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


PICTURE = _picture("Quay 42 opens")
SEED = _deck(PICTURE)
OCR = OcrOptions("auto")


def _with_picture(deck: bytes, picture: bytes) -> bytes:
    """`deck` with every picture part replaced by `picture`'s bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(deck)) as original, zipfile.ZipFile(out, "w") as package:
        for item in original.infolist():
            media = item.filename.startswith("ppt/media/")
            package.writestr(item.filename, picture if media else original.read(item))
    return out.getvalue()


def _bomb_png(width: int, height: int) -> bytes:
    """A valid PNG header claiming width x height pixels, with one tiny compressed row."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0"))
        + chunk(b"IEND", b"")
    )


def _read(path: Path, ocr: OcrOptions = OCR) -> tuple[str, list[Activity]]:
    heard: list[Activity] = []
    with listening(heard.append):
        [document] = list(read_file(path, ocr=ocr))
    return document.text, heard


def test_the_seeds_picture_is_read_at_its_slide(tmp_path: Path) -> None:
    path = tmp_path / "deck.pptx"
    path.write_bytes(SEED)
    text, _ = _read(path)
    assert text.startswith("Harbour plan")
    assert "Quay" in text.split()


@FUZZ_FEW
@given(data=st.data())
def test_a_damaged_picture_costs_the_picture_never_the_slide(tmp_path: Path, data: st.DataObject) -> None:
    path = tmp_path / "deck.pptx"
    path.write_bytes(_with_picture(SEED, damaged(PICTURE, data)))
    try:
        text, heard = _read(path)
    except UnreadableFileError as exc:  # pragma: no cover - the slide's title is always there
        raise AssertionError(f"the slide's text was lost with its picture: {exc}") from exc
    assert text.startswith("Harbour plan")
    # A picture that could not be decoded is named with its reason on one line.
    assert all("\n" not in activity.problem for activity in heard)


def test_a_picture_claiming_billions_of_pixels_is_reported_and_never_decoded(tmp_path: Path) -> None:
    path = tmp_path / "deck.pptx"
    path.write_bytes(_with_picture(SEED, _bomb_png(100_000, 100_000)))
    text, heard = _read(path)
    assert text == "Harbour plan"
    [problem] = [activity.problem for activity in heard if activity.problem]
    assert "too large to OCR" in problem
    assert problem.startswith("picture image")


def test_pictures_past_the_cap_are_counted_not_read(tmp_path: Path) -> None:
    path = tmp_path / "deck.pptx"
    path.write_bytes(_deck(PICTURE, _picture("Second one"), _picture("Third one")))
    text, heard = _read(path, OcrOptions("auto", max_pages=1))
    assert "Quay" in text.split()
    assert "Third" not in text
    assert [a.doing for a in heard if a.doing.startswith("OCR picture")] == ["OCR picture 1 (image1.png)"]
    assert "2 more pictures not read by OCR ([ingest] ocr_max_pages)" in [a.problem for a in heard]


def test_pictures_are_not_read_when_ocr_is_off(tmp_path: Path) -> None:
    path = tmp_path / "deck.pptx"
    path.write_bytes(SEED)
    text, heard = _read(path, OcrOptions("off"))
    assert text == "Harbour plan"
    assert heard == []


def test_a_mail_with_ten_thousand_picture_attachments_reads_a_capped_few(tmp_path: Path) -> None:
    message = EmailMessage()
    message["Subject"] = "Photos"
    message.set_content("See the photos.")
    tiny = _bomb_png(1, 1)  # too small to hold text: passed over from its header, not counted
    message.add_attachment(PICTURE, maintype="image", subtype="png", filename="quay.png")
    for number in range(10_000):
        message.add_attachment(tiny, maintype="image", subtype="png", filename=f"p{number}.png")
    path = tmp_path / "photos.eml"
    path.write_bytes(message.as_bytes(policy=email.policy.default))
    text, heard = _read(path, OcrOptions("auto", max_pages=3))
    assert "See the photos." in text
    assert "Quay" in text.split()
    assert "(attachments after the first 20 not read)" in text
    assert [a.doing for a in heard if a.doing.startswith("OCR picture")] == ["OCR picture 1 (quay.png)"]
