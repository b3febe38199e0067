"""PDF reader: page spans on a hand-written PDF, and reasons for encrypted, damaged and empty files."""

from __future__ import annotations

import io
import itertools
import logging
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from raggity.core.types import PageSpan
from raggity.documents.readers import UnreadableFileError, read_file
from raggity.documents.readers.pdf import PAGE_SEPARATOR


def make_pdf(pages: list[list[str]]) -> bytes:
    """A minimal valid PDF: one Helvetica text line per string, with a correct xref table."""
    count = len(pages)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(count))
    bodies = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, lines in enumerate(pages):
        bodies.append(
            (
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>"
            ).encode()
        )
        ops = []
        for n, line in enumerate(lines):
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"BT /F1 12 Tf 72 {720 - 20 * n} Td ({escaped}) Tj ET")
        stream = "\n".join(ops).encode("latin-1")
        bodies.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(bodies, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(bodies) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(bodies) + 1, xref)
    return bytes(out)


PAGES = [
    ["Alpha opening page", "with a second line"],
    ["Bravo unique phrase on page two"],
    ["Charlie closing page"],
]


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def reason(path: Path) -> str:
    with pytest.raises(UnreadableFileError) as caught:
        list(read_file(path))
    return caught.value.message


def page_of(text: str, spans: tuple[PageSpan, ...], phrase: str) -> int:
    at = text.index(phrase)
    matching = [span.page for span in spans if span.start <= at and at + len(phrase) <= span.end]
    assert len(matching) == 1
    return matching[0]


def test_the_helper_writes_a_pdf_pypdf_parses_strictly() -> None:
    reader = PdfReader(io.BytesIO(make_pdf(PAGES)), strict=True)
    assert len(reader.pages) == 3
    assert "Bravo unique phrase" in reader.pages[1].extract_text()


def test_pages_are_mapped_to_their_text(tmp_path: Path) -> None:
    path = write(tmp_path / "doc.pdf", make_pdf(PAGES))
    [document] = list(read_file(path))
    assert document.kind == "pdf"
    assert document.source == str(path)
    assert [span.page for span in document.pages] == [1, 2, 3]
    assert page_of(document.text, document.pages, "Alpha opening page") == 1
    assert page_of(document.text, document.pages, "with a second line") == 1
    assert page_of(document.text, document.pages, "Bravo unique phrase on page two") == 2
    assert page_of(document.text, document.pages, "Charlie closing page") == 3


def test_spans_cover_each_page_exactly_and_only_separators_lie_between(tmp_path: Path) -> None:
    [document] = list(read_file(write(tmp_path / "doc.pdf", make_pdf(PAGES))))
    spans = document.pages
    assert spans[0].start == 0
    assert spans[-1].end == len(document.text)
    for before, after in itertools.pairwise(spans):
        assert document.text[before.end : after.start] == PAGE_SEPARATOR
    for span in spans:
        page_text = document.text[span.start : span.end]
        assert page_text == page_text.strip()
        assert page_text


def test_pages_without_text_are_left_out_and_numbers_kept(tmp_path: Path) -> None:
    path = write(tmp_path / "doc.pdf", make_pdf([["First"], [], ["Third words"]]))
    [document] = list(read_file(path))
    assert [span.page for span in document.pages] == [1, 3]
    assert page_of(document.text, document.pages, "Third words") == 3


def test_pdf_with_no_text_at_all(tmp_path: Path) -> None:
    assert reason(write(tmp_path / "scan.pdf", make_pdf([[], []]))) == "no extractable text (scanned PDF?)"


def encrypted(user_password: str, owner_password: str | None = None) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf(PAGES))))
    writer.encrypt(user_password, owner_password)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_encrypted_pdf_with_a_user_password(tmp_path: Path) -> None:
    assert reason(write(tmp_path / "locked.pdf", encrypted("secret"))) == "encrypted PDF"


def test_encrypted_pdf_with_an_empty_user_password_is_read(tmp_path: Path) -> None:
    data = encrypted("", owner_password="owner-only")
    assert PdfReader(io.BytesIO(data)).is_encrypted
    [document] = list(read_file(write(tmp_path / "owner.pdf", data)))
    assert page_of(document.text, document.pages, "Bravo unique phrase on page two") == 2


def test_truncated_pdf_is_corrupt(tmp_path: Path) -> None:
    data = make_pdf(PAGES)
    assert reason(write(tmp_path / "cut.pdf", data[: len(data) // 2])).startswith("corrupt PDF: ")


def test_garbage_with_pdf_extension_is_corrupt(tmp_path: Path) -> None:
    message = reason(write(tmp_path / "fake.pdf", b"this is not a pdf at all\n" * 50))
    assert message.startswith("corrupt PDF: ")
    assert len(message) < 120


def test_zero_byte_pdf_is_empty(tmp_path: Path) -> None:
    assert reason(write(tmp_path / "empty.pdf", b"")) == "empty file"


def test_any_parser_exception_becomes_a_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_reader(*args: object, **kwargs: object) -> None:
        raise KeyError("/Root")

    monkeypatch.setattr("raggity.documents.readers.pdf.PdfReader", broken_reader)
    assert reason(write(tmp_path / "doc.pdf", make_pdf(PAGES))) == "corrupt PDF: '/Root'"


def test_keyboard_interrupt_is_never_swallowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("raggity.documents.readers.pdf.PdfReader", interrupted)
    with pytest.raises(KeyboardInterrupt):
        list(read_file(write(tmp_path / "doc.pdf", make_pdf(PAGES))))


def test_pypdf_warnings_are_not_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    data = make_pdf(PAGES)
    caplog.set_level(logging.DEBUG)
    reason(write(tmp_path / "cut.pdf", data[: len(data) // 2]))
    assert not [record for record in caplog.records if record.name.startswith("pypdf")]
