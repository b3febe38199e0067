"""While OCR runs, the ingest bar names the file and the page; a page OCR could not read is printed
as one line naming the file and the page. Reports travel by raggity.core.activity, as the reader sends them."""

from __future__ import annotations

import io

from rich.console import Console

from raggity.cli.progress import RichIngestProgress
from raggity.core.activity import Activity, report


def test_the_bar_names_the_file_and_page_and_prints_an_unread_page() -> None:
    buffer = io.StringIO()
    with RichIngestProgress(Console(file=buffer, width=200, force_terminal=False)) as progress:
        progress.planned(1, {".pdf": 1000})
        report(Activity("/docs/[red]scan.pdf", "OCR page 4 (2/12)"))
        report(Activity("/docs/[red]scan.pdf", "OCR page 5 (3/12)", "page 5: OCR found no text"))
    shown = buffer.getvalue()
    # The name is data: a markup-like name is printed as it is, never as a style.
    assert "ingest [red]scan.pdf: OCR page 4 (2/12)" in shown
    assert "/docs/[red]scan.pdf: page 5: OCR found no text" in shown
    report(Activity("/docs/other.pdf", "OCR page 1 (1/1)"))  # after the bar: nobody listens
    assert "other.pdf" not in buffer.getvalue()
