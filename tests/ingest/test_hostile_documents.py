"""Hostile and broken documents are skipped with one clear line: zip bombs, entity expansion, external
entities, encryption, truncation; and the oversized parts of a good file are left out, not read."""

from __future__ import annotations

import email.policy
import json
import struct
import zipfile
from email.message import EmailMessage
from pathlib import Path

import pytest

from raggity.documents.readers import TooMuchTextError, UnreadableFileError, read_file
from raggity.documents.readers.mail import MAX_ATTACHMENTS
from raggity.documents.readers.package import MAX_ENTRIES, Limits, Package
from raggity.documents.readers.safe_xml import parse_xml

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
DOCUMENT = (
    f'<w:document xmlns:w="{W}"><w:body><w:p><w:r><w:t>Harmless text.</w:t></w:r></w:p></w:body></w:document>'
)


def word_file(path: Path, document: str = DOCUMENT, *, extra: int = 0) -> Path:
    """A minimal Word file: a content types part and a main document, and `extra` empty parts."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("[Content_Types].xml", "<Types/>")
        package.writestr("word/document.xml", document)
        for k in range(extra):
            package.writestr(f"junk/{k}", b"")
    return path


def reason(path: Path) -> str:
    with pytest.raises(UnreadableFileError) as caught:
        list(read_file(path))
    message = caught.value.message
    assert "\n" not in message
    return message


def test_a_minimal_word_file_reads(tmp_path: Path) -> None:
    [document] = read_file(word_file(tmp_path / "ok.docx"))
    assert document.text == "Harmless text."


def test_billion_laughs_is_refused_before_any_entity_expands(tmp_path: Path) -> None:
    entities = '<!ENTITY a "aaaaaaaaaa">' + "".join(
        f'<!ENTITY {chr(98 + k)} "{("&" + chr(97 + k) + ";") * 10}">' for k in range(8)
    )
    laughs = f'<?xml version="1.0"?><!DOCTYPE w [{entities}]>' + DOCUMENT.replace("Harmless text.", "&i;")
    assert (
        reason(word_file(tmp_path / "laughs.docx", laughs))
        == "word/document.xml declares a DTD (entity expansion is refused)"
    )


def test_an_external_entity_is_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET", encoding="utf-8")
    xxe = f'<?xml version="1.0"?><!DOCTYPE w [<!ENTITY x SYSTEM "file://{secret}">]>' + DOCUMENT.replace(
        "Harmless text.", "&x;"
    )
    assert "declares a DTD" in reason(word_file(tmp_path / "xxe.docx", xxe))


def test_too_many_entries_is_a_zip_bomb(tmp_path: Path) -> None:
    assert reason(word_file(tmp_path / "many.docx", extra=MAX_ENTRIES)) == (
        f"zip bomb? Word file holds {MAX_ENTRIES + 2:,} entries (at most {MAX_ENTRIES:,})"
    )


def test_a_part_that_expands_past_the_cap_is_a_zip_bomb(tmp_path: Path) -> None:
    path = word_file(tmp_path / "bomb.docx")
    # Declare 3 GiB for the main part in the central directory, as a bomb's honest header would.
    data = bytearray(path.read_bytes())
    central = [i for i in range(len(data)) if data.startswith(b"PK\x01\x02", i)]
    for offset in central:
        name_length = struct.unpack_from("<H", data, offset + 28)[0]
        if data[offset + 46 : offset + 46 + name_length] == b"word/document.xml":
            struct.pack_into("<I", data, offset + 24, 3 << 30)
    path.write_bytes(bytes(data))
    assert reason(path) == "zip bomb? Word file part word/document.xml expands past 128 MiB"


def test_the_inflated_bytes_are_counted_not_only_the_declared_size(tmp_path: Path) -> None:
    # The constructor seam: small limits, and a part of 200 KiB of spaces (a few hundred bytes zipped).
    path = word_file(tmp_path / "spaces.docx", DOCUMENT.replace("Harmless text.", " " * 200_000))
    package = Package(path.read_bytes(), "Word file", Limits(part_bytes=100_000))
    with pytest.raises(UnreadableFileError, match="zip bomb"):
        package.read("word/document.xml")
    assert Package(path.read_bytes(), "Word file").read("word/document.xml").count(b" ") > 200_000


def test_encrypted_office_files_and_encrypted_zip_entries(tmp_path: Path) -> None:
    ole = tmp_path / "locked.xlsx"
    ole.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(4096))
    assert reason(ole) == "encrypted or password-protected Excel file (or an old binary Office file)"
    path = word_file(tmp_path / "flagged.docx")
    data = bytearray(path.read_bytes())
    for offset in [i for i in range(len(data)) if data.startswith(b"PK\x01\x02", i)]:
        struct.pack_into("<H", data, offset + 8, struct.unpack_from("<H", data, offset + 8)[0] | 1)
    path.write_bytes(bytes(data))
    assert reason(path) == "encrypted or password-protected Word file"


def test_password_protected_opendocument_and_drm_epub(tmp_path: Path) -> None:
    odt = tmp_path / "locked.odt"
    with zipfile.ZipFile(odt, "w") as package:
        package.writestr(
            "META-INF/manifest.xml",
            '<m:manifest xmlns:m="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><m:file-entry'
            ' m:full-path="content.xml"><m:encryption-data/></m:file-entry></m:manifest>',
        )
        package.writestr("content.xml", b"\x00encrypted bytes")
    assert reason(odt) == "encrypted or password-protected OpenDocument text"
    book = tmp_path / "locked.epub"
    with zipfile.ZipFile(book, "w") as package:
        package.writestr("mimetype", "application/epub+zip")
        package.writestr("META-INF/encryption.xml", "<encryption/>")
    assert reason(book) == "encrypted e-book (DRM)"


@pytest.mark.parametrize("name", ["cut.docx", "cut.pptx", "cut.xlsx", "cut.odt", "cut.epub"])
def test_truncated_packages(tmp_path: Path, name: str) -> None:
    whole = word_file(tmp_path / "whole.docx", extra=3).read_bytes()
    path = tmp_path / name
    path.write_bytes(whole[: len(whole) // 2])
    assert reason(path).startswith("corrupt or truncated ")


def test_empty_and_truncated_notebooks_mail_and_rtf(tmp_path: Path) -> None:
    notebook = tmp_path / "cut.ipynb"
    notebook.write_text('{"cells": [{"cell_type": "code", "source": "pri', encoding="utf-8")
    assert reason(notebook).startswith("corrupt notebook: ")
    (tmp_path / "empty.docx").write_bytes(b"")
    assert reason(tmp_path / "empty.docx") == "empty file"
    (tmp_path / "fake.rtf").write_text("just words", encoding="utf-8")
    assert reason(tmp_path / "fake.rtf") == "not an RTF file (no {\\rtf header)"


def test_a_notebook_output_of_megabytes_is_left_out_and_the_code_kept(tmp_path: Path) -> None:
    cell = {
        "cell_type": "code",
        "source": "train()",
        "outputs": [{"output_type": "stream", "text": "loss " * 2_000_000}],
    }
    path = tmp_path / "big.ipynb"
    path.write_text(json.dumps({"cells": [cell], "nbformat": 4}), encoding="utf-8")
    [document] = read_file(path)
    assert document.text == "train()"


def test_a_sheet_longer_than_the_text_bound_stops_there(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    path.write_text("a,b\n" + "1,2\n" * 50_000, encoding="utf-8")
    with pytest.raises(TooMuchTextError):
        list(read_file(path, max_chars=100_000))


def test_a_mail_with_ten_thousand_attachments_reads_the_first_few(tmp_path: Path) -> None:
    # Written as MIME text: EmailMessage.add_attachment takes minutes for 10,000 parts.
    parts = ['Subject: Many\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n']
    parts.append("--B\nContent-Type: text/plain\n\nBody.\n")
    parts += [
        f'--B\nContent-Type: text/plain\nContent-Disposition: attachment; filename="n{k}.txt"\n\nnote {k}\n'
        for k in range(10_000)
    ]
    path = tmp_path / "many.eml"
    path.write_text("".join(parts) + "--B--\n", encoding="utf-8")
    [document] = read_file(path)
    notes = [line for line in document.text.splitlines() if line.startswith("note ")]
    assert notes == [f"note {k}" for k in range(MAX_ATTACHMENTS)]
    assert f"(attachments after the first {MAX_ATTACHMENTS} not read)" in document.text


def test_mail_nested_past_the_depth_limit_is_named_not_read(tmp_path: Path) -> None:
    inner = EmailMessage()
    inner["Subject"] = "Innermost"
    inner.set_content("Deep secret words.")
    for level in range(3):
        outer = EmailMessage()
        outer["Subject"] = f"Level {level}"
        outer.set_content("Wrapper.")
        outer.add_attachment(inner)
        inner = outer
    path = tmp_path / "nested.eml"
    path.write_bytes(inner.as_bytes(policy=email.policy.default))
    [document] = read_file(path)
    assert "Level 1" in document.text
    assert "Deep secret words." not in document.text
    assert "not read (more than 2 mails deep)" in document.text


def test_an_attachment_that_cannot_be_read_is_named_with_its_reason(tmp_path: Path) -> None:
    message = EmailMessage()
    message["Subject"] = "Report"
    message.set_content("See attached.")
    message.add_attachment(
        b"PK\x03\x04broken", maintype="application", subtype="octet-stream", filename="r.docx"
    )
    path = tmp_path / "report.eml"
    path.write_bytes(message.as_bytes(policy=email.policy.default))
    [document] = read_file(path)
    assert "Attachment r.docx: not read (corrupt or truncated Word file" in document.text


def test_a_doctype_behind_comments_and_instructions_is_still_refused() -> None:
    hidden = b'<?xml version="1.0"?>\n<!-- note --><?pi x?>\n<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>'
    with pytest.raises(UnreadableFileError, match="declares a DTD"):
        parse_xml(hidden, "part.xml")
    utf16 = '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE a><a/>'.encode("utf-16")
    with pytest.raises(UnreadableFileError, match="declares a DTD"):
        parse_xml(utf16, "part.xml")


def test_a_part_of_more_elements_than_allowed_is_refused() -> None:
    cells = b"<sheet>" + b"<c/>" * 5000 + b"</sheet>"
    assert len(parse_xml(cells, "sheet1.xml")) == 5000
    with pytest.raises(UnreadableFileError, match=r"sheet1\.xml has more than 1,000 XML elements"):
        parse_xml(cells, "sheet1.xml", max_elements=1000)


def test_a_csv_cell_past_the_csv_modules_bound_is_a_malformed_file(tmp_path: Path) -> None:
    path = tmp_path / "dump.csv"
    path.write_text("a,b\n1," + "x" * 200_000 + "\n", encoding="utf-8")
    assert reason(path).startswith("malformed CSV at line 2: field larger than field limit")


def test_an_mbox_after_a_blank_line_is_still_read_message_by_message(tmp_path: Path) -> None:
    envelope = b"From a@b Mon Jun  3 10:00:00 2024\n"
    mbox = b"\n\n" + envelope + b"Subject: One\n\nFirst.\n\n" + envelope + b"Subject: Two\n\nSecond.\n"
    path = tmp_path / "box.mbox"
    path.write_bytes(mbox)
    [document] = read_file(path)
    assert [h.title for h in document.headings] == ["One", "Two"]
    assert [span.page for span in document.pages] == [1, 2]
