"""Named places end to end: a folder of slides, sheets, notebooks and mail is ingested, and `rag show`
opens each citation as printed (`deck.pptx:slide 2`, `costs.xlsx:Costs!A5:C5`, ...) at its place."""

from __future__ import annotations

import email.policy
import json
import os
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

import nbformat  # type: ignore[import-untyped,import-not-found,unused-ignore]
import openpyxl  # type: ignore[import-untyped,import-not-found,unused-ignore]
import pptx  # type: ignore[import-untyped,import-not-found,unused-ignore]
import pytest
from typer.testing import CliRunner

from raggity.api.session import Raggity
from raggity.api.show import UnknownReferenceError, show
from raggity.cli.main import app
from raggity.config.loader import load_config
from raggity.store.layout import IndexLayout
from tests.support import write_config


@dataclass(frozen=True)
class Indexed:
    root: Path
    config: Path
    layout: IndexLayout


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Indexed:
    root = tmp_path_factory.mktemp("places")
    docs = root / "docs"
    docs.mkdir()
    deck = pptx.Presentation()
    for number in range(1, 4):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Topic {number}"
        slide.placeholders[1].text = " ".join(f"point{number}x{k}" for k in range(30))
        slide.notes_slide.notes_text_frame.text = f"The codeword of slide {number} is heron{number}."
    deck.save(str(docs / "deck.pptx"))
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Costs"
    sheet.append(["Item", "Quantity", "Note"])
    for row in range(2, 60):
        sheet.append([f"item{row}", row, " ".join(f"w{row}x{k}" for k in range(6))])
    book.save(str(docs / "costs.xlsx"))
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell(" ".join(f"m{k}x{j}" for j in range(30))) for k in range(1, 6)
    ]
    nbformat.write(notebook, str(docs / "analysis.ipynb"))
    mails = []
    for number in range(1, 4):
        message = EmailMessage()
        message["Subject"], message["From"] = f"Topic {number}", "ada@example.org"
        message.set_content(" ".join(f"mail{number}x{k}" for k in range(30)))
        mails.append(
            b"From ada@example.org Mon Jun  3 10:00:00 2024\n" + message.as_bytes(policy=email.policy.default)
        )
    (docs / "mail.mbox").write_bytes(b"\n".join(mails))
    config = write_config(root, ingest={"chunk_tokens": 48, "parent_tokens": 48})
    session = Raggity(load_config(config))
    report = session.ingest([docs])
    assert report.skipped == ()
    return Indexed(root, config, session.layout)


@pytest.mark.parametrize(
    ("reference", "inside", "outside"),
    [
        ("deck.pptx:slide 2", "heron2", "heron3"),
        ("docs/deck.pptx:slides 2-3", "heron3", "heron1"),
        ("analysis.ipynb:cell 4", "m4x0", "m5x0"),
        ('mail.mbox:message 2 "Topic 2"', "mail2x0", "mail3x0"),
        ("costs.xlsx:Costs!A30:C30", "item30", "item2;"),
    ],
)
def test_show_opens_a_named_place(indexed: Indexed, reference: str, inside: str, outside: str) -> None:
    found = show(indexed.layout, reference)
    text = "\n".join(chunk.text for chunk in found)
    assert inside in text
    assert outside not in text


def test_every_printed_citation_opens_its_own_chunk(indexed: Indexed) -> None:
    """What search prints, show reads: each chunk's citation leads back to (at least) that chunk."""
    session = Raggity(load_config(indexed.config))
    for name in ("deck.pptx", "costs.xlsx", "analysis.ipynb", "mail.mbox"):
        hits = session.search(name.split(".")[0], k=5).candidates
        for hit in hits:
            citation = hit.chunk.location.cite(hit.chunk.source)
            assert hit.chunk.id in {c.id for c in show(indexed.layout, citation)}, citation


def test_a_place_the_file_does_not_have_is_a_clear_error(indexed: Indexed) -> None:
    with pytest.raises(UnknownReferenceError):
        show(indexed.layout, "deck.pptx:slide 40")
    with pytest.raises(UnknownReferenceError):
        show(indexed.layout, "costs.xlsx:Other!A1:C3")


def test_cli_prints_the_place(indexed: Indexed) -> None:
    os.chdir(indexed.root)
    result = CliRunner().invoke(app, ["show", "deck.pptx:slide 2", "--json", "--config", str(indexed.config)])
    assert result.exit_code == 0, result.stderr
    entries = json.loads(result.stdout)
    assert {entry["location"] for entry in entries} == {"slide 2"}
    assert all(entry["citation"].endswith("deck.pptx:slide 2") for entry in entries)
