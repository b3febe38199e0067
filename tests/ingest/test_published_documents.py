"""Files other projects publish (tests/fixtures/published/README.md says where each comes from and
under which licence): python-docx's, python-pptx's, odfpy's and nbformat's own test documents, and
CPython's email test corpus. Unlike the files the other tests write with the formats' libraries,
these were saved by Word, PowerPoint, LibreOffice, OpenOffice, Jupyter and mail programs, so they
hold what real files hold: styles, placeholders, repeated cells, digests, forwarded mail, pictures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from raggity.core.activity import Activity, listening
from raggity.core.types import Chunk, Document
from raggity.documents.chunker import ChunkingSettings, chunk_document
from raggity.documents.readers import OcrOptions, UnreadableFileError, read_file

PUBLISHED = Path(__file__).parent.parent / "fixtures" / "published"
NO_OCR = OcrOptions("off")


class _Words:
    """One token per run of non-space characters: enough to cut chunks where the tests expect."""

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def read(name: str, ocr: OcrOptions = NO_OCR) -> Document:
    [document] = list(read_file(PUBLISHED / name, ocr=ocr))
    return document


def chunks(document: Document, tokens: int) -> list[Chunk]:
    return chunk_document(document, _Words(), ChunkingSettings(chunk_tokens=tokens, parent_tokens=tokens))


def cited(name: str, phrase: str, *, tokens: int = 400, ocr: OcrOptions = NO_OCR) -> str:
    """The citation of the one chunk that holds `phrase`."""
    [chunk] = [c for c in chunks(read(name, ocr), tokens) if phrase in c.text]
    return chunk.location.cite(name)


def headings(document: Document) -> list[tuple[int, str]]:
    return [(h.level, h.title) for h in document.headings]


def test_word_heading_and_paragraph_from_python_docx() -> None:
    document = read("python-docx-test.docx")
    assert headings(document) == [(1, "python-docx was here!")]
    assert document.text == "python-docx was here!\n\npython-docx was here too!"
    assert cited("python-docx-test.docx", "too!") == (
        'python-docx-test.docx:heading "python-docx was here!" (paragraphs 1-2)'
    )


def test_word_tables_with_a_table_style_read_as_rows_each_its_own_paragraph() -> None:
    document = read("python-docx-tbl-having-applied-style.docx")
    table = "foobar | barfoo\nfoo | bar\nbar | foo\nfoo to you | and a hearty foo to you too sir!"
    assert document.text == "\n\n".join([table] * 3)
    # Each table is one numbered paragraph (the place a chunk in it is cited at).
    assert [(span.page, document.text[span.start : span.end].strip()) for span in document.pages] == [
        (1, table),
        (2, table),
        (3, table),
    ]


def test_slide_notes_title_and_body_placeholders_from_python_pptx() -> None:
    document = read("python-pptx-ph-inherit-props.pptx")
    assert headings(document) == [(1, "Title Text"), (1, "Slide 2")]
    assert "Body Text\n\nNotes: Notes in inherited position and size." in document.text
    name = "python-pptx-ph-inherit-props.pptx"
    assert cited(name, "Notes in modified position", tokens=12) == f"{name}:slide 2"
    assert cited(name, "Notes in inherited position", tokens=12) == f"{name}:slide 1"


def test_slide_groups_and_tables_from_python_pptx() -> None:
    document = read("python-pptx-test_slides.pptx")
    assert "Group test text" in document.text
    assert "Col head 1 | Col head 2\nCell text 1 | Cell text 2" in document.text
    assert cited("python-pptx-test_slides.pptx", "Cell text 1") == "python-pptx-test_slides.pptx:slide 1"


def test_spreadsheet_without_a_header_row_names_columns_by_letter() -> None:
    # python-pptx's embedded workbook (Excel) and odfpy's pythagoras.ods (KSpread/OpenOffice).
    assert read("python-pptx-shp-embedded-xlsx.xlsx").text == "Sheet1\nA: 1\nA: 2\nA: 3"
    name = "python-pptx-shp-embedded-xlsx.xlsx"
    assert cited(name, "A: 2") == f"{name}:Sheet1!A1:A3"
    ods = read("odfpy-pythagoras.ods")
    assert ods.text == "Sheet1\nA: 3\nA: 4\nA: 5\nA: 7"
    assert cited("odfpy-pythagoras.ods", "A: 7") == "odfpy-pythagoras.ods:Sheet1!A1:A4"


def test_a_sheet_of_one_row_is_read_not_taken_for_a_header() -> None:
    # odfpy's chinese_spreadsheet.ods: one row, "test" repeated over three columns, under a sheet
    # named in Chinese. Taken for a header, its only row was dropped and the sheet read as its name.
    document = read("odfpy-chinese_spreadsheet.ods")
    assert headings(document) == [(1, "工作表1")]
    assert document.text == "工作表1\nA: test; B: test; C: test"
    assert cited("odfpy-chinese_spreadsheet.ods", "C: test") == "odfpy-chinese_spreadsheet.ods:工作表1!A1:C1"


def test_opendocument_text_tables_lists_and_headings_from_odfpy() -> None:
    assert read("odfpy-simpletable.odt").text == "Cell 1 | Cell 2\nCell 3 (bold) | Cell 4 (italic)"
    lists = read("odfpy-twolevellist.odt").text
    assert lists.split("\n\n") == [
        "Line 1",
        "- Item A",
        "- Item B",
        "- Subitem B.1",
        "- Subitem B.2 (bold)",
        "- Item C",
        "Line 4",
    ]
    assert cited("odfpy-twolevellist.odt", "Line 4", tokens=3) == "odfpy-twolevellist.odt:paragraph 7"
    document = read("odfpy-headerfooter.odt")
    assert headings(document) == [(1, "Lorem ipsum")]
    assert (
        cited("odfpy-headerfooter.odt", "Lorem")
        == 'odfpy-headerfooter.odt:heading "Lorem ipsum" (paragraph 1)'
    )


def test_opendocument_slides_from_odfpy() -> None:
    document = read("odfpy-ol.odp")
    assert headings(document) == [(1, "OL")]
    assert "Eins\nTsvey\nDray" in document.text
    assert cited("odfpy-ol.odp", "Tsvelf") == "odfpy-ol.odp:slide 1"


def test_odfpy_external_entity_file_is_refused_and_its_target_never_read() -> None:
    # nasty.odt declares <!ENTITY nasty SYSTEM "examples/externalcontent.txt"> and uses it.
    with pytest.raises(UnreadableFileError, match="DTD"):
        read("odfpy-nasty.odt")


@pytest.mark.parametrize("name", ["nbformat-test4.ipynb", "nbformat-test3.ipynb"])
def test_notebook_headings_cells_and_outputs_from_nbformat(name: str) -> None:
    # test4 is nbformat 4 (markdown headings); test3 is nbformat 3, whose headings are cells of
    # their own (read as text before, so the notebook had no headings).
    document = read(name)
    assert headings(document) == [
        (1, "nbconvert latex test"),
        (2, "Printed Using Python"),
        (2, "Pyout"),
        (3, "Image"),
    ]
    assert 'print("hello")\n\nOutput:\nhello' in document.text
    # Cell 3 is the heading cell (or the markdown heading), cell 4 the code and its output.
    assert cited(name, "Printed Using", tokens=12) == f"{name}:cells 3-4"
    [chunk] = [c for c in chunks(document, 12) if "Output:\nhello" in c.text]
    assert chunk.heading == "nbconvert latex test > Printed Using Python"


def test_notebook_error_output_is_its_name_and_message() -> None:
    document = read("nbformat-many_tracebacks.ipynb")
    assert document.text.endswith("Output:\nNameError: name 'iAmNotDefined' is not defined")
    assert cited("nbformat-many_tracebacks.ipynb", "NameError") == "nbformat-many_tracebacks.ipynb:cell 1"


def test_a_digest_reads_every_message_and_the_lists_own_parts() -> None:
    # CPython's msg_02.txt: a mailing-list digest, with the list's table of contents and footer as
    # inline text parts and five messages inside a multipart/digest. Only the first part was read.
    document = read("cpython-email-msg_02.eml")
    titles = [title for level, title in headings(document) if level == 3]
    assert titles == [
        "[Ppp] testing #1",
        "(no subject)",
        "[Ppp] testing #3",
        "[Ppp] testing #4",
        "[Ppp] testing #5",
    ]
    assert "Today's Topics:" in document.text
    assert "Ppp mailing list" in document.text  # the footer, after the digest
    assert document.text.count("hello") == 5
    assert cited("cpython-email-msg_02.eml", "Today's Topics") == (
        'cpython-email-msg_02.eml:message "Ppp digest, Vol 1 #2 - 5 msgs"'
    )


def test_a_mail_forwarded_as_the_whole_message_is_read() -> None:
    # CPython's msg_46.txt: Content-Type message/rfc822 at the top; its text was lost.
    document = read("cpython-email-msg_46.eml")
    assert "Testing email forwarding with Groupwise 1.2.2010" in document.text
    assert headings(document)[2:] == [
        (3, "GroupwiseForwardingTest"),
        (4, 'From: "Dr. Sender" <sender@example.net>, Date: Mon, 01 Feb 2010 12:18:40 +0100'),
    ]
    assert cited("cpython-email-msg_46.eml", "Groupwise 1.2.2010") == (
        'cpython-email-msg_46.eml:message "GroupwiseForwardingTest"'
    )


def test_a_named_text_attachment_is_read_under_its_name() -> None:
    document = read("cpython-email-msg_04.eml")
    assert headings(document)[-1] == (3, "Attachment: msg.txt")
    assert document.text.count("a simple kind of mirror\nto reflect upon our own") == 2


# Pictures inside published files, read by OCR (the `ocr` extra, installed by `make install`).
OCR = OcrOptions("auto")


def test_pictures_in_a_word_file_are_read_by_ocr_and_cited_as_images() -> None:
    # python-docx's having-images.docx holds only pictures: without OCR there is no text.
    with pytest.raises(UnreadableFileError, match="no text"):
        read("python-docx-having-images.docx")
    document = read("python-docx-having-images.docx", OCR)
    assert "TRUTH" in document.text
    assert "python\npowered" in document.text
    assert cited("python-docx-having-images.docx", "TRUTH", ocr=OCR).endswith(" (image, OCR)")


def test_pictures_on_slides_are_read_by_ocr_at_their_slide() -> None:
    assert "TRUTH" not in read("python-pptx-shp-picture.pptx").text
    document = read("python-pptx-shp-picture.pptx", OCR)
    [slide_two] = [c for c in chunks(document, 400) if "TRUTH" in c.text]
    assert slide_two.location.cite("p.pptx") == "p.pptx:slide 2"
    # The picture's own text is marked: a chunk that starts in it says it came from an image.
    [picture] = [c for c in chunks(document, 2) if c.text.startswith("TRUTH")]
    assert picture.location.cite("p.pptx") == "p.pptx:slide 2 (image, OCR)"


def test_a_picture_attached_to_a_mail_is_read_by_ocr() -> None:
    # CPython's msg_07.txt attaches a GIF (the "dingus fish") with two words drawn in it.
    assert "dogs" not in read("cpython-email-msg_07.eml").text
    seen: list[Activity] = []
    with listening(seen.append):
        document = read("cpython-email-msg_07.eml", OCR)
    assert "This is the dingus fish." in document.text
    assert "dogs" in document.text.lower()
    assert any(a.doing == "OCR picture 1 (dingusfish.gif)" for a in seen)


@pytest.mark.parametrize(
    ("name", "what", "modern"),
    [
        ("old.doc", "Word 97-2003", "docx"),
        ("old.xls", "Excel 97-2003", "xlsx"),
        ("old.ppt", "PowerPoint 97-2003", "pptx"),
    ],
)
def test_office_97_files_are_one_line_skips_that_say_to_convert(
    tmp_path: Path, name: str, what: str, modern: str
) -> None:
    # The OLE compound-file signature that every Office 97-2003 file starts with.
    path = tmp_path / name
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))
    with pytest.raises(UnreadableFileError) as caught:
        list(read_file(path))
    assert caught.value.message == (
        f"{what} file: not read; convert it to .{modern} (libreoffice --headless --convert-to {modern} FILE)"
    )


def test_a_new_office_file_saved_under_an_old_name_is_read_as_what_it_is(tmp_path: Path) -> None:
    path = tmp_path / "renamed.doc"
    path.write_bytes((PUBLISHED / "python-docx-test.docx").read_bytes())
    [document] = list(read_file(path))
    assert document.text == "python-docx was here!\n\npython-docx was here too!"
