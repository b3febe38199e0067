"""A mixed folder of documents for an ingest run (issue #44): Word, PowerPoint, Excel, OpenDocument
text, CSV, notebooks, mail and e-books, each holding one distinct fact in a table, a slide's notes,
a notebook cell or a message, written by the formats' own libraries (the dev extra has them); and two
scanned pages (a PNG and an image-only PDF, text drawn by Pillow) that only OCR can read.

    .venv/bin/python bench/office_folder.py /tmp/mixed 200
    .venv/bin/rag init /tmp/mixed.toml --force
    /usr/bin/time .venv/bin/rag ingest --config /tmp/mixed.toml /tmp/mixed
    .venv/bin/rag search --config /tmp/mixed.toml "codeword of deck 7"
"""

# mypy: disable-error-code="no-untyped-call"
from __future__ import annotations

import email.policy
import sys
from email.message import EmailMessage
from pathlib import Path

import docx  # type: ignore[import-untyped,import-not-found,unused-ignore]
import nbformat  # type: ignore[import-untyped,import-not-found,unused-ignore]
import openpyxl  # type: ignore[import-untyped,import-not-found,unused-ignore]
import pptx  # type: ignore[import-untyped,import-not-found,unused-ignore]
from ebooklib import epub  # type: ignore[import-untyped,import-not-found,unused-ignore]
from odf.opendocument import OpenDocumentText  # type: ignore[import-untyped,import-not-found,unused-ignore]
from odf.text import H, P  # type: ignore[import-untyped,import-not-found,unused-ignore]
from PIL import Image, ImageDraw, ImageFont

PARAGRAPH = "This paragraph is filler about harbours, boats, tides and the people who keep the lights. "


def write(folder: Path, k: int) -> None:  # noqa: PLR0915 - one short branch per format
    kind = k % 8
    if kind == 0:
        document = docx.Document()
        document.add_heading(f"Report {k}", 1)
        for _ in range(20):
            document.add_paragraph(PARAGRAPH * 3)
        document.add_heading("Budget", 2)
        table = document.add_table(rows=2, cols=2)
        table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Item", "Cost"
        table.rows[1].cells[0].text, table.rows[1].cells[1].text = f"lamp{k}", f"{1000 + k} euros"
        document.save(str(folder / f"report{k}.docx"))
    elif kind == 1:
        deck = pptx.Presentation()
        for number in range(1, 11):
            slide = deck.slides.add_slide(deck.slide_layouts[1])
            slide.shapes.title.text = f"Deck {k} slide {number}"
            slide.placeholders[1].text = PARAGRAPH
            slide.notes_slide.notes_text_frame.text = (
                f"The codeword of deck {k} slide {number} is heron{k}x{number}."
            )
        deck.save(str(folder / f"deck{k}.pptx"))
    elif kind == 2:
        book = openpyxl.Workbook()
        sheet = book.active
        sheet.title = "Costs"
        sheet.append(["Item", "Quantity", "Price"])
        for row in range(2, 500):
            sheet.append([f"item{k}x{row}", row, 2.5])
        book.save(str(folder / f"costs{k}.xlsx"))
    elif kind == 3:
        text = OpenDocumentText()
        text.text.addElement(H(outlinelevel=1, text=f"Minutes {k}"))
        for _ in range(20):
            text.text.addElement(P(text=PARAGRAPH * 3))
        text.save(str(folder / f"minutes{k}.odt"))
    elif kind == 4:
        rows = "".join(f"person{k}x{n},city{n},{n * 3}\n" for n in range(300))
        (folder / f"people{k}.csv").write_text("name,city,age\n" + rows, encoding="utf-8")
    elif kind == 5:
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [nbformat.v4.new_markdown_cell(f"## Step {n}\n{PARAGRAPH}") for n in range(15)] + [
            nbformat.v4.new_code_cell(f"threshold_{k} = {k * 7}")
        ]
        nbformat.write(notebook, str(folder / f"analysis{k}.ipynb"))
    elif kind == 6:
        messages = []
        for number in range(1, 11):
            message = EmailMessage()
            message["Subject"], message["From"] = f"Topic {k}.{number}", "ada@example.org"
            message.set_content(PARAGRAPH * 4 + f"The meeting {k}.{number} is in room {k * 10 + number}.")
            messages.append(
                b"From ada@example.org Mon Jun  3 10:00:00 2024\n"
                + message.as_bytes(policy=email.policy.default)
            )
        (folder / f"mail{k}.mbox").write_bytes(b"\n".join(messages))
    else:
        book = epub.EpubBook()
        book.set_identifier(f"id-{k}")
        book.set_title(f"Book {k}")
        book.set_language("en")
        chapters = []
        for number in range(1, 6):
            chapter = epub.EpubHtml(title=f"C{number}", file_name=f"c{number}.xhtml", lang="en")
            chapter.content = f"<h1>Chapter {number} of book {k}</h1>" + f"<p>{PARAGRAPH * 5}</p>" * 4
            book.add_item(chapter)
            chapters.append(chapter)
        book.spine = chapters
        book.add_item(epub.EpubNcx())
        book.add_item(epub.EpubNav())
        epub.write_epub(str(folder / f"book{k}.epub"), book)


SCANS = {
    "scan-notice.png": [
        "Notice to all keepers",
        "The harbour office moves to 17 Quay Street in March.",
        "Boats come in at dawn and leave at dusk.",
    ],
    "scan-letter.pdf": [
        "Letter from the council",
        "The new foghorn was tested on the ninth of May.",
        "Tides and lights are logged by the keeper.",
    ],
}
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def scan(path: Path, lines: list[str]) -> None:
    """A page as a scanner gives it: an A4 image at 150 dpi with no text layer (a PDF of the image)."""
    font = ImageFont.truetype(FONT, 30) if Path(FONT).exists() else ImageFont.load_default(size=30)
    image = Image.new("L", (1240, 1754), 255)
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        draw.text((90, 140 + 70 * number), line.strip(), fill=0, font=font)
    image.save(path, resolution=150.0)


def main() -> None:
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(int(sys.argv[2])):
        write(folder, k)
    for name, lines in SCANS.items():
        scan(folder / name, lines)


if __name__ == "__main__":
    main()
