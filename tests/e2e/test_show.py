"""`rag show`: chunk ids and printed citations lead back to the indexed text, printed as plain text."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from raggity.api.session import Raggity
from raggity.api.show import UnknownReferenceError, show
from raggity.cli.main import app
from raggity.config.loader import load_config
from raggity.core.types import Chunk
from raggity.store.layout import IndexLayout
from raggity.store.vector_table import VectorTableReader
from tests.ingest.test_pdf import make_pdf
from tests.support import write_config

NOTES = """---
title: Backups
tags: [ops]
---
# Backups

Backups run every night at two.\r
\tThey are kept for thirty days.\r

## Restoring

To restore, stop the service and copy the snapshot back.
Markup [red]stays[/red] text, [/S] too, and \x1b[2J is shown, not obeyed.
"""

PAGE = """<html><head><title>copy</title></head><body>
<nav>Home | Index</nav>
<div class="body" role="main"><section id="module-copy"><h1>copy</h1>
<p>Shallow and deep copy operations.</p>
<dl><dt id="copy.deepcopy">copy.deepcopy(x)</dt><dd><p>Return a deep copy of x.</p></dd></dl>
</section></div></body></html>
"""


@dataclass(frozen=True)
class Indexed:
    root: Path
    config: Path
    layout: IndexLayout
    docs: Path


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Indexed:
    root = tmp_path_factory.mktemp("show")
    docs = root / "docs"
    (docs / "library").mkdir(parents=True)
    (docs / "notes.md").write_bytes(NOTES.encode("utf-8"))
    (docs / "library" / "copy.html").write_text(PAGE, encoding="utf-8")
    (docs / "c#sharp.md").write_text(
        "# C sharp\n\nThe sharp sign is part of this file's name.\n", encoding="utf-8"
    )
    # Names printed with visible escapes: a newline, and a bidi override.
    (docs / "new\nline.md").write_text("# Odd\n\nA newline is part of this file's name.\n", encoding="utf-8")
    (docs / "bidi\u202eevil.md").write_text("# Odder\n\nAn override is in this name.\n", encoding="utf-8")
    (docs / "guide.pdf").write_bytes(make_pdf([["Installing needs a disk."], ["Upgrading keeps your data."]]))
    config = write_config(root, ingest={"chunk_tokens": 32})
    session = Raggity(load_config(config))
    report = session.ingest([docs])
    assert report.skipped == ()
    return Indexed(root, config, session.layout, docs)


def all_chunks(layout: IndexLayout, name: str) -> list[Chunk]:
    return VectorTableReader(layout.table).chunks_of(str(layout.root.parent / "docs" / name))


def test_markdown_line_ranges_are_lines_of_the_file(indexed: Indexed) -> None:
    # Front matter, CRLF line ends and a tab-indented line: cited lines still hold the chunk's text.
    lines = (indexed.docs / "notes.md").read_text(encoding="utf-8").split("\n")
    chunks = all_chunks(indexed.layout, "notes.md")
    assert chunks
    for chunk in chunks:
        cited = "\n".join(lines[chunk.location.line_start - 1 : chunk.location.line_end])
        assert cited.replace("\r", "") == chunk.text.strip("\n")
    restore = next(c for c in chunks if "To restore" in c.text)
    assert restore.location.line_start == lines.index("## Restoring") + 1


def test_show_by_chunk_id(indexed: Indexed) -> None:
    chunk = all_chunks(indexed.layout, "notes.md")[0]
    assert show(indexed.layout, chunk.id) == [chunk]


def test_show_by_line_citation_returns_the_overlapping_chunks(indexed: Indexed) -> None:
    chunks = all_chunks(indexed.layout, "notes.md")
    restore = next(c for c in chunks if "To restore" in c.text)
    found = show(indexed.layout, f"{indexed.docs / 'notes.md'}:line {restore.location.line_start}")
    assert found == [restore]


def test_show_by_anchor_citation_with_a_path_tail(indexed: Indexed) -> None:
    found = show(indexed.layout, "library/copy.html#copy.deepcopy")
    assert [c.location.anchor for c in found] == ["copy.deepcopy"]
    assert "Return a deep copy of x." in found[0].text
    assert found[0].location.cite("library/copy.html") == "library/copy.html#copy.deepcopy"


def test_a_file_whose_name_holds_a_hash_is_shown_by_its_path(indexed: Indexed) -> None:
    whole = all_chunks(indexed.layout, "c#sharp.md")
    assert whole
    for reference in ["c#sharp.md", "docs/c#sharp.md", str(indexed.docs / "c#sharp.md")]:
        assert show(indexed.layout, reference) == whole


def test_show_by_page_citation(indexed: Indexed) -> None:
    [found] = show(indexed.layout, "guide.pdf:page 2")
    assert "Upgrading keeps your data." in found.text
    assert (found.location.page_start, found.location.page_end, str(found.location)) == (1, 2, "pages 1-2")


@pytest.mark.parametrize(
    "reference",
    ["0123456789abcdef0123", "notes.md:lines 900-901", "library/copy.html#nowhere", "missing.md"],
)
def test_unknown_reference_is_a_clear_error(indexed: Indexed, reference: str) -> None:
    with pytest.raises(UnknownReferenceError, match="nothing in the index matches"):
        show(indexed.layout, reference)


def run(indexed: Indexed, *args: str) -> tuple[int, str, str]:
    os.chdir(indexed.root)
    result = CliRunner().invoke(app, ["show", *args, "--config", str(indexed.config)])
    return result.exit_code, result.stdout, result.stderr


def test_cli_prints_document_text_as_plain_text_with_controls_visible(indexed: Indexed) -> None:
    code, stdout, _ = run(indexed, "docs/notes.md")
    assert code == 0
    assert "[red]stays[/red] text, [/S] too" in stdout
    assert "\\x1b[2J is shown" in stdout
    assert "\x1b" not in stdout
    assert stdout.startswith("docs/notes.md:lines 1-")


def test_cli_json_lists_citations(indexed: Indexed) -> None:
    code, stdout, _ = run(indexed, "library/copy.html#copy.deepcopy", "--json")
    assert code == 0
    [entry] = json.loads(stdout)
    assert entry["citation"].endswith("library/copy.html#copy.deepcopy")
    assert entry["location"] == "#copy.deepcopy"


def test_cli_unknown_id_is_one_error_line_and_exit_1(indexed: Indexed) -> None:
    code, stdout, stderr = run(indexed, "no-such-chunk")
    assert code == 1
    assert stdout == ""
    assert stderr.splitlines()[0] == "error: nothing in the index matches 'no-such-chunk'"


@pytest.mark.parametrize(
    ("printed", "text"),
    [
        ("docs/new\\nline.md", "A newline is part of this file's name."),
        ("docs/bidi<U+202E>evil.md:lines 1-3", "An override is in this name."),
    ],
)
def test_cli_reads_a_citation_as_it_printed_an_escaped_name(
    indexed: Indexed, printed: str, text: str
) -> None:
    code, stdout, stderr = run(indexed, printed)
    assert code == 0, stderr
    assert stdout.startswith(printed.partition(":")[0] + ":lines 1-")
    assert text in stdout
    with pytest.raises(UnknownReferenceError):  # the API reads names as they are unless told otherwise
        show(indexed.layout, printed)


def test_cli_shows_a_name_that_is_not_utf8_as_its_byte(indexed: Indexed) -> None:
    code, _, stderr = run(indexed, os.fsdecode(b"caf\xe9.md"))
    assert code == 1
    assert stderr.splitlines()[0] == "error: nothing in the index matches 'caf\\xe9.md'"
