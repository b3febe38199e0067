"""Office, OpenDocument, notebook, mail, e-book and RTF readers, on files written by each format's own
library: the text, the headings, and the place each chunk cites (issue #44)."""

from __future__ import annotations

import email.policy
import re
import zipfile
from email.message import EmailMessage
from pathlib import Path

import docx  # type: ignore[import-untyped,import-not-found,unused-ignore]
import nbformat  # type: ignore[import-untyped,import-not-found,unused-ignore]
import openpyxl  # type: ignore[import-untyped,import-not-found,unused-ignore]
import pptx  # type: ignore[import-untyped,import-not-found,unused-ignore]
from ebooklib import epub  # type: ignore[import-untyped,import-not-found,unused-ignore]
from odf.opendocument import OpenDocumentSpreadsheet, OpenDocumentText  # type: ignore[import-untyped,import-not-found,unused-ignore]
from odf.table import Table, TableCell, TableRow  # type: ignore[import-untyped,import-not-found,unused-ignore]
from odf.text import H, P  # type: ignore[import-untyped,import-not-found,unused-ignore]

from raggity.core.types import Chunk, Document, Heading
from raggity.documents.chunker import ChunkingSettings, chunk_document
from raggity.documents.readers import read_file
from raggity.documents.readers.outline import Outline


class _Words:
    """One token per run of non-space characters: enough to cut chunks where the tests expect."""

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def read_one(path: Path) -> Document:
    [document] = list(read_file(path))
    return document


def chunks(path: Path, tokens: int = 400) -> list[Chunk]:
    return chunk_document(
        read_one(path), _Words(), ChunkingSettings(chunk_tokens=tokens, parent_tokens=tokens)
    )


def cited(path: Path, phrase: str, tokens: int = 400) -> str:
    """The citation of the chunk that holds `phrase`."""
    [chunk] = [c for c in chunks(path, tokens) if phrase in c.text]
    return chunk.location.cite(path.name)


def test_docx_headings_lists_tables_and_the_paragraph_under_a_heading(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Annual report", level=1)
    for k in range(12):
        document.add_paragraph(f"Introduction sentence number {k} about the harbour.")
    document.add_heading("Budget", level=2)
    document.add_paragraph("The lighthouse budget is 4,200 euros.")
    table = document.add_table(rows=2, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Item", "Cost"
    table.rows[1].cells[0].text, table.rows[1].cells[1].text = "Lamp", "1200"
    document.add_paragraph("Order the lamp first", style="List Bullet")
    path = tmp_path / "report.docx"
    document.save(str(path))

    read = read_one(path)
    assert [(h.level, h.title) for h in read.headings] == [(1, "Annual report"), (2, "Budget")]
    assert "Item | Cost\nLamp | 1200" in read.text
    assert "- Order the lamp first" in read.text
    # Paragraph 1 is the title, 2-13 the introduction, 14 the heading "Budget", 15 its first paragraph.
    [budget] = [c for c in chunk_document(read, _Words(), ChunkingSettings(8, 8)) if "4,200" in c.text]
    assert budget.heading == "Annual report > Budget"
    assert budget.location.cite("report.docx") == 'report.docx:heading "Budget" (paragraphs 14-15)'
    assert cited(path, "number 0 ") == 'report.docx:heading "Annual report" (paragraphs 1-13)'


def test_docx_tracked_changes_read_as_accepted_and_footnote_markers_kept(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("PLACEHOLDER")
    path = tmp_path / "changes.docx"
    document.save(str(path))
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    paragraph = (
        '<w:p><w:r><w:t xml:space="preserve">The fee is </w:t></w:r>'
        '<w:del w:id="1" w:author="a"><w:r><w:delText>ten</w:delText></w:r></w:del>'
        '<w:ins w:id="2" w:author="a"><w:r><w:t>twelve</w:t></w:r></w:ins>'
        '<w:r><w:t xml:space="preserve"> euros.</w:t></w:r><w:r><w:footnoteReference w:id="1"/></w:r></w:p>'
    )
    rewrite_part(
        path, "word/document.xml", lambda xml: re.sub(r"<w:p>.*PLACEHOLDER.*?</w:p>", paragraph, xml)
    )
    text = read_one(path).text
    assert w  # the namespace the paragraph uses is the document's own
    assert "The fee is twelve euros.[1]" in text
    assert "ten" not in text


def test_pptx_one_section_per_slide_with_title_text_table_and_notes(tmp_path: Path) -> None:
    deck = pptx.Presentation()
    for number in range(1, 4):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Quarter {number}"
        slide.placeholders[1].text = f"Revenue grew in quarter {number}."
        slide.notes_slide.notes_text_frame.text = f"Say that the heron{number} project shipped."
    table_slide = deck.slides.add_slide(deck.slide_layouts[5])
    table_slide.shapes.title.text = "Costs"
    shape = table_slide.shapes.add_table(2, 2, 0, 0, 100, 100).table
    shape.cell(0, 0).text, shape.cell(0, 1).text, shape.cell(1, 0).text, shape.cell(1, 1).text = (
        "a",
        "b",
        "c",
        "d",
    )
    path = tmp_path / "deck.pptx"
    deck.save(str(path))

    read = read_one(path)
    assert [h.title for h in read.headings] == ["Quarter 1", "Quarter 2", "Quarter 3", "Costs"]
    assert "Notes: Say that the heron2 project shipped." in read.text
    assert "a | b\nc | d" in read.text
    assert cited(path, "heron2", tokens=12) == "deck.pptx:slide 2"
    assert cited(path, "c | d", tokens=12) == "deck.pptx:slide 4"


def test_xlsx_rows_as_header_value_lines_cited_as_cell_ranges(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Summary"
    sheet.append(["Just", "text"])
    costs = book.create_sheet("Costs 2024")
    costs.append(["Item", "Quantity", "Price", "Total"])
    for row in range(2, 40):
        costs.append([f"item {row}", row, 2.5, f"=B{row}*C{row}"])
    path = tmp_path / "costs.xlsx"
    book.save(str(path))
    # openpyxl saves formulas without their values; Excel saves the value beside the formula.
    rewrite_part(
        path,
        "xl/worksheets/sheet2.xml",
        lambda xml: xml.replace("<f>B7*C7</f><v></v>", "<f>B7*C7</f><v>17.5</v>"),
    )

    read = read_one(path)
    assert [h.title for h in read.headings] == ["Summary", "Costs 2024"]
    assert "Item: item 7; Quantity: 7; Price: 2.5; Total: 17.5" in read.text
    assert "Item: item 8; Quantity: 8; Price: 2.5; Total: =B8*C8" in read.text
    [chunk] = [c for c in chunks(path, 40) if "Item: item 7;" in c.text]
    rows = [int(n) for n in re.findall(r"Item: item (\d+);", chunk.text)]
    assert chunk.location.cite("costs.xlsx") == f"costs.xlsx:'Costs 2024'!A{rows[0]}:D{rows[-1]}"
    # A first row that is not all text is data, and its columns are named by letter.
    assert "Just: text" not in read.text


def test_csv_rows_name_their_columns_and_cite_their_lines(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text("name;city\nAda;London\nGrace;New York\n\nLinus;Helsinki\n", encoding="utf-8")
    read = read_one(path)
    assert read.text.splitlines() == [
        "name: Ada; city: London",
        "name: Grace; city: New York",
        "name: Linus; city: Helsinki",
    ]
    assert cited(path, "Ada", tokens=100) == "people.csv:rows 2-5"
    assert cited(tmp_path / "people.csv", "Linus", tokens=5) == "people.csv:row 5"


def test_ipynb_cells_in_order_with_small_outputs_only(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    small = nbformat.v4.new_output("stream", name="stdout", text="mean=4.2\n")
    large = nbformat.v4.new_output("stream", name="stdout", text="x" * 5000)
    image = nbformat.v4.new_output(
        "display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}
    )
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Analysis\nWe load the data."),
        nbformat.v4.new_code_cell("print(mean)", outputs=[small, large]),
        nbformat.v4.new_markdown_cell("## Plot"),
        nbformat.v4.new_code_cell("plot()", outputs=[image]),
    ]
    path = tmp_path / "analysis.ipynb"
    nbformat.write(notebook, str(path))

    read = read_one(path)
    assert [(h.level, h.title) for h in read.headings] == [(1, "Analysis"), (2, "Plot")]
    assert "Output:\nmean=4.2" in read.text
    assert "xxxxx" not in read.text
    assert "iVBOR" not in read.text
    assert cited(path, "print(mean)", tokens=6) == "analysis.ipynb:cell 2"


def _message(subject: str, body: str, *, html: bool = False) -> EmailMessage:
    message = EmailMessage()
    message["Subject"], message["From"], message["Date"] = (
        subject,
        "Ada <ada@example.org>",
        "Mon, 3 Jun 2024 10:00:00 +0000",
    )
    if html:
        message.set_content(
            "<html><body><p>" + body + "</p><script>evil()</script></body></html>", subtype="html"
        )
    else:
        message.set_content(body)
    return message


def test_mbox_messages_are_headed_by_subject_sender_and_date_with_attachments(tmp_path: Path) -> None:
    second = _message("Budget", "See the attached sheet.")
    second.add_attachment(b"item,cost\nlamp,1200\n", maintype="text", subtype="csv", filename="costs.csv")
    second.add_attachment(b"\x89PNG\r\n", maintype="image", subtype="png", filename="photo.png")
    messages = [
        _message("Hello", "First message."),
        second,
        _message("Rendered", "Only <b>HTML</b> here.", html=True),
    ]
    data = b"".join(
        b"From ada@example.org Mon Jun  3 10:00:00 2024\n" + m.as_bytes(policy=email.policy.default) + b"\n"
        for m in messages
    )
    path = tmp_path / "mail.mbox"
    path.write_bytes(data)

    read = read_one(path)
    titles = [h.title for h in read.headings]
    assert titles[:2] == ["Hello", "From: Ada <ada@example.org>, Date: Mon, 03 Jun 2024 10:00:00 +0000"]
    assert "Attachment: costs.csv" in titles
    assert "item: lamp; cost: 1200" in read.text
    assert "Only HTML here." in read.text
    assert "evil" not in read.text
    assert cited(path, "lamp", tokens=400) == 'mail.mbox:message 2 "Budget"'
    [chunk] = [c for c in chunks(path) if "lamp" in c.text]
    assert chunk.heading.startswith("Budget > From: Ada")


def test_eml_prefers_the_plain_part_and_cites_its_subject(tmp_path: Path) -> None:
    message = _message("Plans", "The plain words.")
    message.add_alternative("<p>The HTML words.</p>", subtype="html")
    path = tmp_path / "plans.eml"
    path.write_bytes(message.as_bytes(policy=email.policy.default))
    read = read_one(path)
    assert "The plain words." in read.text
    assert "HTML words" not in read.text
    assert cited(path, "plain words") == 'plans.eml:message "Plans"'


def test_epub_chapters_follow_the_spine_with_their_headings(tmp_path: Path) -> None:
    book = epub.EpubBook()
    book.set_identifier("id-1")
    book.set_title("Harbours")
    book.set_language("en")
    first = epub.EpubHtml(title="One", file_name="one.xhtml", lang="en")
    first.content = "<h1>The Harbour</h1><p>Boats come in at dawn.</p>"
    second = epub.EpubHtml(title="Two", file_name="two.xhtml", lang="en")
    second.content = "<h1>The Lighthouse</h1><h2>Its lamp</h2><p>The lamp turns twice a minute.</p>"
    book.add_item(second)  # the manifest's order is not the reading order: the spine is
    book.add_item(first)
    book.spine = ["nav", first, second]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    path = tmp_path / "book.epub"
    epub.write_epub(str(path), book)

    read = read_one(path)
    assert read.text.index("Boats come in") < read.text.index("The lamp turns")
    assert [(h.level, h.title) for h in read.headings][-2:] == [(1, "The Lighthouse"), (2, "Its lamp")]
    assert cited(path, "lamp turns") == 'book.epub:chapter 2 "The Lighthouse"'


def test_odt_and_ods_read_as_word_and_excel_files_are(tmp_path: Path) -> None:
    text = OpenDocumentText()
    text.text.addElement(H(outlinelevel=1, text="Minutes"))
    text.text.addElement(P(text="We agreed on the harbour plan."))
    odt = tmp_path / "minutes.odt"
    text.save(str(odt))
    read = read_one(odt)
    assert [(h.level, h.title) for h in read.headings] == [(1, "Minutes")]
    assert cited(odt, "harbour plan") == 'minutes.odt:heading "Minutes" (paragraphs 1-2)'

    sheet = OpenDocumentSpreadsheet()
    table = Table(name="Stock")
    for values in (["Item", "Count"], ["rope", "12"], ["sail", "3"]):
        row = TableRow()
        for value in values:
            cell = TableCell()
            cell.addElement(P(text=value))
            row.addElement(cell)
        table.addElement(row)
    sheet.spreadsheet.addElement(table)
    ods = tmp_path / "stock.ods"
    sheet.save(str(ods))
    assert "Item: sail; Count: 3" in read_one(ods).text
    assert cited(ods, "sail", tokens=3) == "stock.ods:Stock!A3:B3"


def test_odp_slides_with_titles_and_notes(tmp_path: Path) -> None:
    content = (
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"'
        ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
        ' xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0">'
        "<office:body><office:presentation>"
        + "".join(
            f'<draw:page draw:name="p{n}"><draw:frame presentation:class="title"><draw:text-box><text:p>Topic {n}'
            f'</text:p></draw:text-box></draw:frame><draw:frame presentation:class="outline"><draw:text-box>'
            f"<text:p>Point {n}</text:p></draw:text-box></draw:frame><presentation:notes><draw:frame"
            f' presentation:class="notes"><draw:text-box><text:p>Remember {n}</text:p></draw:text-box>'
            "</draw:frame></presentation:notes></draw:page>"
            for n in (1, 2)
        )
        + "</office:presentation></office:body></office:document-content>"
    )
    path = tmp_path / "talk.odp"
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.presentation")
        package.writestr("content.xml", content)
    read = read_one(path)
    assert [h.title for h in read.headings] == ["Topic 1", "Topic 2"]
    assert "Notes: Remember 2" in read.text
    assert cited(path, "Remember 2", tokens=5) == "talk.odp:slide 2"


def test_rtf_paragraphs_headings_and_escapes(tmp_path: Path) -> None:
    path = tmp_path / "letter.rtf"
    path.write_bytes(
        rb"{\rtf1\ansi\ansicpg1252{\fonttbl{\f0 Times;}}{\info{\title Hidden}}{\*\generator Word;}"
        rb"\pard\outlinelevel0 Dear caf\'e9\par"
        rb"\pard Costs rose by 5\u8364? this year.{\footnote\pard See the ledger.}\par}"
    )
    read = read_one(path)
    assert read.text == "Dear café\n\nCosts rose by 5€ this year. [Footnote: See the ledger.]"
    assert [(h.level, h.title) for h in read.headings] == [(1, "Dear café")]
    assert cited(path, "Costs rose") == 'letter.rtf:heading "Dear café" (paragraphs 1-2)'


def rewrite_part(path: Path, part: str, change: object) -> None:
    """Rewrite one XML part of a zip package in place, keeping the others."""
    with zipfile.ZipFile(path) as original:
        items = [(item, original.read(item)) for item in original.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for item, data in items:
            assert callable(change)
            out.writestr(item.filename, change(data.decode()).encode() if item.filename == part else data)


def test_a_laid_out_section_keeps_its_headings_at_their_text() -> None:
    outline = Outline(1_000)
    outline.place(1, "chapter{s} {n}")
    outline.block("Intro")
    outline.place(2, "chapter{s} {n}")
    outline.section("\n\nTitle\n\nBody", (Heading(offset=2, level=1, title="Title"),))
    document = outline.document("book.epub", "epub")
    [heading] = document.headings
    assert document.text[heading.offset :].startswith("Title\n\nBody")
    assert [(span.page, document.text[span.start : span.end].strip()) for span in document.pages] == [
        (1, "Intro"),
        (2, "Title\n\nBody"),
    ]
