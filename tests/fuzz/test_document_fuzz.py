"""Damaged documents of every structured kind: a reader either reads the file or says in one line why
it cannot (UnreadableFileError), never another exception, whatever bytes or XML it is given.

Seeds are real files written by each format's library; examples flip bytes, cut the file, or rewrite
a part of the zip package with damaged or hostile XML."""

from __future__ import annotations

import email.policy
import io
import json
import zipfile
from email.message import EmailMessage
from pathlib import Path

import docx  # type: ignore[import-untyped,import-not-found,unused-ignore]
import openpyxl  # type: ignore[import-untyped,import-not-found,unused-ignore]
import pptx  # type: ignore[import-untyped,import-not-found,unused-ignore]
import pytest
from ebooklib import epub  # type: ignore[import-untyped,import-not-found,unused-ignore]
from hypothesis import given
from hypothesis import strategies as st
from odf.opendocument import OpenDocumentText  # type: ignore[import-untyped,import-not-found,unused-ignore]
from odf.text import H, P  # type: ignore[import-untyped,import-not-found,unused-ignore]

from raggity.documents.readers import UnreadableFileError, read_file
from tests.fuzz.conftest import FUZZ, damaged


def _docx() -> bytes:
    document = docx.Document()
    document.add_heading("Title", 1)
    document.add_paragraph("Some text.")
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "a"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _pptx() -> bytes:
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Slide"
    slide.notes_slide.notes_text_frame.text = "Notes"
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def _xlsx() -> bytes:
    book = openpyxl.Workbook()
    book.active.append(["a", "b"])
    book.active.append([1, "=A2*2"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _odt() -> bytes:
    document = OpenDocumentText()
    document.text.addElement(H(outlinelevel=1, text="Title"))
    document.text.addElement(P(text="Some text."))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _epub() -> bytes:
    book = epub.EpubBook()
    book.set_identifier("id")
    book.set_title("Book")
    chapter = epub.EpubHtml(title="One", file_name="one.xhtml")
    chapter.content = "<h1>One</h1><p>Text.</p>"
    book.add_item(chapter)
    book.spine = [chapter]
    book.add_item(epub.EpubNcx())
    out = io.BytesIO()
    epub.write_epub(out, book)
    return out.getvalue()


def _mail() -> bytes:
    message = EmailMessage()
    message["Subject"] = "Hi"
    message.set_content("Body")
    message.add_attachment(b"a,b\n1,2\n", maintype="text", subtype="csv", filename="t.csv")
    return b"From a@b Mon Jun  3 10:00:00 2024\n" + message.as_bytes(policy=email.policy.default)


SEEDS = {
    "docx": _docx(),
    "pptx": _pptx(),
    "xlsx": _xlsx(),
    "ipynb": json.dumps(
        {"cells": [{"cell_type": "markdown", "source": "# T\ntext"}], "nbformat": 4}
    ).encode(),
    "mbox": _mail(),
    "rtf": rb"{\rtf1\ansi{\fonttbl{\f0 T;}}\pard\outlinelevel0 Head\par\pard Body \u8364? x\'e9\par}",
    "csv": b"a,b\n1,2\n3,4\n",
    "odt": _odt(),
    "epub": _epub(),
}
XML_JUNK = st.sampled_from(
    [
        "",
        "<",
        "&amp",
        "&undefined;",
        "<!DOCTYPE x [<!ENTITY a 'b'>]>",
        "]]>",
        "<w:t>" * 50,
        "\x00",
        "<x:y xmlns:x='urn:x'/>",
        "<c r='ZZZZZ99999999999'><v>1e999</v></c>",
        "<c t='s'><v>999999</v></c>",
        "<a:t>\ud800</a:t>",
    ]
)


def _read(path: Path) -> None:
    reason = ""
    try:
        texts = [document.text for document in read_file(path)]
    except UnreadableFileError as exc:
        reason = exc.message
        texts = []
    # Either text or a one-line reason, never an empty document.
    assert all(text.strip() for text in texts)
    assert "\n" not in reason


@pytest.mark.parametrize("kind", sorted(SEEDS))
@FUZZ
@given(data=st.data())
def test_flipped_and_cut_bytes(tmp_path: Path, kind: str, data: st.DataObject) -> None:
    path = tmp_path / f"f.{kind}"
    path.write_bytes(damaged(SEEDS[kind], data))
    _read(path)


@pytest.mark.parametrize("kind", ["docx", "pptx", "xlsx", "odt", "epub"])
@FUZZ
@given(data=st.data())
def test_damaged_xml_parts(tmp_path: Path, kind: str, data: st.DataObject) -> None:
    with zipfile.ZipFile(io.BytesIO(SEEDS[kind])) as original:
        items = [(item.filename, original.read(item)) for item in original.infolist()]
    parts = [name for name, _ in items if name.endswith((".xml", ".rels", ".opf", ".xhtml"))]
    target = data.draw(st.sampled_from(parts))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for name, content in items:
            if name != target:
                package.writestr(name, content)
                continue
            text = content.decode("utf-8")
            at = data.draw(st.integers(0, len(text)))
            damaged = text[:at] + data.draw(XML_JUNK) + text[at:]
            package.writestr(name, damaged.encode("utf-8", errors="surrogatepass"))
    path = tmp_path / f"f.{kind}"
    path.write_bytes(out.getvalue())
    _read(path)
