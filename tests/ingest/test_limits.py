"""[ingest] max_file_chars: every reader stops at the bound, and the ingest skips the file with one reason."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.documents.readers import TooMuchTextError, read_file
from tests.ingest.test_pdf import make_pdf
from tests.support import write_config

REASON = r"^more than 1,000 characters of text \(raise ingest.max_file_chars\)$"


def nested_form_pdf(levels: int, fanout: int) -> bytes:
    """A PDF of about 1.5 KB whose one page draws a form that draws a form... `fanout`**`levels` times."""
    first_form = 5
    page_contents = first_form + levels + 1
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >>"
        b" /XObject << /X0 %d 0 R >> >> /Contents %d 0 R >>" % (first_form, page_contents),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for level in range(levels + 1):
        if level < levels:
            body = b"/X%d Do\n" % (level + 1) * fanout
            resources = b"/XObject << /X%d %d 0 R >>" % (level + 1, first_form + level + 1)
        else:
            body = b"BT /F1 12 Tf 72 720 Td (hello world ) Tj ET\n"
            resources = b""
        objects.append(
            b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> "
            + resources
            + b" >> /Length %d >>\nstream\n" % len(body)
            + body
            + b"endstream"
        )
    page_body = b"/X0 Do\n" * fanout
    objects.append(b"<< /Length %d >>\nstream\n" % len(page_body) + page_body + b"endstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_one_line_text_file_past_the_bound_yields_nothing(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_text("x" * 3000, encoding="utf-8")
    documents = read_file(path, max_chars=1000, segment_chars=500)
    # Refused before the first segment: no part of the file reaches the index.
    with pytest.raises(TooMuchTextError, match=REASON):
        next(documents)


def test_text_exactly_at_the_bound_is_read(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("word\n" * 200, encoding="utf-8")
    assert sum(len(d.text) for d in read_file(path, max_chars=1000)) == 1000


def test_bound_counts_characters_not_bytes(tmp_path: Path) -> None:
    # 900 characters in 1,802 bytes of UTF-16: larger than the bound on disk, within it as text.
    path = tmp_path / "wide.txt"
    path.write_bytes(codecs.BOM_UTF16_LE + ("é\n" * 450).encode("utf-16-le"))
    assert sum(len(d.text) for d in read_file(path, max_chars=1000)) == 900


@pytest.mark.parametrize("name", ["a.md", "a.rst", "a.py", "a.html"])
def test_every_text_format_is_bounded(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("<p>" + "words and more words\n" * 100 + "</p>", encoding="utf-8")
    with pytest.raises(TooMuchTextError, match=REASON):
        list(read_file(path, max_chars=1000))


def test_pdf_with_many_pages_stops_at_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "long.pdf"
    path.write_bytes(make_pdf([[f"Page {n} says something long enough to count."] for n in range(60)]))
    with pytest.raises(TooMuchTextError, match=REASON):
        list(read_file(path, max_chars=1000))


def test_small_pdf_that_expands_on_one_page_stops_inside_the_page(tmp_path: Path) -> None:
    path = tmp_path / "bomb.pdf"
    path.write_bytes(nested_form_pdf(levels=3, fanout=10))
    assert path.stat().st_size < 2000
    with pytest.raises(TooMuchTextError, match=REASON):
        list(read_file(path, max_chars=1000))


def test_ingest_skips_a_file_past_the_bound_with_one_reason(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "small.md").write_text("# Notes\n\nA short note about backups.\n", encoding="utf-8")
    (docs / "huge.txt").write_text("x" * 5000, encoding="utf-8")
    config = write_config(tmp_path, ingest={"max_file_chars": 1000})
    report = Raggity(load_config(config)).ingest([docs])
    assert report.added == 1
    assert [(Path(s.source).name, s.reason) for s in report.skipped] == [
        ("huge.txt", "more than 1,000 characters of text (raise ingest.max_file_chars)")
    ]
