"""Small Office, OpenDocument, e-book and notebook files, written by each format's own library.

Used by bench/office_readers.py to compare extractors (issue #44). The writing libraries are not
raggity dependencies: run it in a scratch venv that has them, e.g.

    python3 -m venv /tmp/m44 && /tmp/m44/bin/pip install python-docx python-pptx openpyxl odfpy \
        ebooklib nbformat
    /tmp/m44/bin/python bench/office_fixtures.py /tmp/fixtures
"""

# mypy: disable-error-code="no-untyped-call"
# ruff: noqa: PLC0415 - each extractor and writer loads only when its format is measured
from __future__ import annotations

import sys
import zipfile
from pathlib import Path
from typing import Any

ROWS = 2000


def make_docx(path: Path) -> None:
    import docx  # type: ignore[import-not-found,import-untyped,unused-ignore]

    document = docx.Document()
    document.add_heading("Annual report", level=1)
    for k in range(40):
        document.add_paragraph(f"Paragraph {k} of the introduction, with some ordinary words in it.")
    document.add_heading("Budget", level=2)
    document.add_paragraph("The budget for the lighthouse project is 4,200 euros.")
    table = document.add_table(rows=1, cols=3)
    for cell, text in zip(table.rows[0].cells, ("Item", "Cost", "Owner"), strict=True):
        cell.text = text
    for item, cost, owner in (("Lamp", "1200", "Ada"), ("Paint", "300", "Bob")):
        cells = table.add_row().cells
        cells[0].text, cells[1].text, cells[2].text = item, cost, owner
    document.add_paragraph("First point", style="List Bullet")
    document.save(str(path))


def make_pptx(path: Path) -> None:
    import pptx  # type: ignore[import-not-found,import-untyped,unused-ignore]

    deck = pptx.Presentation()
    for number in range(1, 21):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Slide title {number}"
        slide.placeholders[1].text = f"Body text of slide {number}"
        slide.notes_slide.notes_text_frame.text = f"Speaker note {number}: the secret word is heron{number}"
    deck.save(str(path))


def make_xlsx(path: Path) -> None:
    import openpyxl  # type: ignore[import-not-found,import-untyped,unused-ignore]

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Costs"
    sheet.append(["Item", "Quantity", "Price", "Total"])
    for row in range(2, ROWS + 2):
        sheet.append([f"item {row}", row, 2.5, f"=B{row}*C{row}"])
    second = book.create_sheet("Notes")
    second.append(["Key", "Value"])
    second.append(["colour", "teal"])
    book.save(str(path))


def make_odt(path: Path) -> None:
    from odf.opendocument import OpenDocumentText  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from odf.text import H, P  # type: ignore[import-not-found,import-untyped,unused-ignore]

    document = OpenDocumentText()
    document.text.addElement(H(outlinelevel=1, text="Annual report"))
    for k in range(40):
        document.text.addElement(P(text=f"Paragraph {k} of the introduction."))
    document.text.addElement(H(outlinelevel=2, text="Budget"))
    document.text.addElement(P(text="The budget for the lighthouse project is 4,200 euros."))
    document.save(str(path))


def make_epub(path: Path) -> None:
    from ebooklib import epub  # type: ignore[import-not-found,import-untyped,unused-ignore]

    book = epub.EpubBook()
    book.set_identifier("id-1")
    book.set_title("A small book")
    book.set_language("en")
    chapters = []
    for number in range(1, 6):
        chapter = epub.EpubHtml(title=f"Chapter {number}", file_name=f"c{number}.xhtml", lang="en")
        chapter.content = (
            f"<h1>Chapter {number}</h1><p>Text of chapter {number}.</p><h2>Part</h2><p>More.</p>"
        )
        book.add_item(chapter)
        chapters.append(chapter)
    book.toc = chapters
    book.spine = ["nav", *chapters]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    epub.write_epub(str(path), book)


def make_ipynb(path: Path) -> None:
    import nbformat  # type: ignore[import-not-found,import-untyped,unused-ignore]

    notebook = nbformat.v4.new_notebook()
    cells: list[Any] = []
    for number in range(30):
        cells.append(nbformat.v4.new_markdown_cell(f"## Step {number}\nWe compute value {number}."))
        cells.append(nbformat.v4.new_code_cell(f"x{number} = {number} * 2\nprint(x{number})"))
    notebook.cells = cells
    nbformat.write(notebook, str(path))


def make_hostile(folder: Path) -> None:
    """A zip bomb, a billion-laughs document, a truncated file and an encrypted (OLE) container."""
    source = folder / "report.docx"
    with (
        zipfile.ZipFile(source) as original,
        zipfile.ZipFile(folder / "bomb.docx", "w", zipfile.ZIP_DEFLATED) as bomb,
    ):
        for item in original.infolist():
            if item.filename != "word/document.xml":
                bomb.writestr(item, original.read(item))
        info = zipfile.ZipInfo("word/document.xml")
        info.compress_type = zipfile.ZIP_DEFLATED
        with bomb.open(info, "w", force_zip64=True) as entry:
            block = b" " * (1 << 20)
            for _ in range(1024):  # 1 GiB of spaces, about 1 MiB compressed
                entry.write(block)
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "aaaaaaaaaa">'
        + "".join(f'<!ENTITY {chr(98 + k)} "{("&" + chr(97 + k) + ";") * 10}">' for k in range(8))
        + ']><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        "<w:body><w:p><w:r><w:t>&i;</w:t></w:r></w:p></w:body></w:document>"
    )
    with (
        zipfile.ZipFile(source) as original,
        zipfile.ZipFile(folder / "laughs.docx", "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for item in original.infolist():
            data = laughs.encode() if item.filename == "word/document.xml" else original.read(item)
            out.writestr(item.filename, data)
    data = source.read_bytes()
    (folder / "truncated.docx").write_bytes(data[: len(data) // 2])
    (folder / "encrypted.docx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 4096)


def main() -> None:
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    make_docx(folder / "report.docx")
    make_pptx(folder / "deck.pptx")
    make_xlsx(folder / "costs.xlsx")
    make_odt(folder / "report.odt")
    make_epub(folder / "book.epub")
    make_ipynb(folder / "analysis.ipynb")
    hostile = folder / "hostile"
    hostile.mkdir(exist_ok=True)
    (hostile / "report.docx").write_bytes((folder / "report.docx").read_bytes())
    make_hostile(hostile)


if __name__ == "__main__":
    main()
