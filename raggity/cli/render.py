"""Rich rendering of API results; JSON shapes for --json live here too.

Data (document text, paths, model output) only ever enters rich as `Text` made with `visible()`,
never inside a markup string: `[/S]` in a chunk is text, not a tag, and an escape sequence is shown,
not obeyed.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.highlighter import JSONHighlighter
from rich.table import Table
from rich.text import Text

from raggity.api import Answer, Candidate, Citation, StageTrace
from raggity.cli.visible import json_escaped, visible


def display_path(source: str) -> str:
    """Relative to the current folder when inside it, else with ~ for the home folder."""
    try:
        path = Path(source)
        if not path.is_absolute():
            return source
        cwd = Path.cwd()
        if path.is_relative_to(cwd):
            return str(path.relative_to(cwd))
        home = Path.home()
        if path.is_relative_to(home):
            return "~" + os.sep + str(path.relative_to(home))
    except (OSError, ValueError):
        pass
    return source


def snippet(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def plain(text: str) -> Text:
    """One line of data as rich text: no markup, controls and newlines shown as escapes."""
    return Text(visible(text))


def print_answer(console: Console, text: str) -> None:
    console.print(Text(visible(text, keep_newlines=True)))


def finish_reply(console: Console, answer: Answer, *, streamed: bool) -> None:
    """What is left to print of a reply once its tokens have streamed to stdout, or none did: the
    end of the streamed line, and the answer's text unless it streamed. A decline is printed even
    after a streamed reply (one no source supports), on a paragraph of its own."""
    if streamed:
        sys.stdout.write("\n")
    if answer.declined or not streamed:
        if streamed:
            console.print()  # set apart from the reply it judges
        print_answer(console, answer.text)


def json_text(data: Any, *, indent: int | None = 2) -> str:
    return json_escaped(json.dumps(data, ensure_ascii=False, indent=indent, default=str))


def print_json(console: Console, data: Any) -> None:
    # Not console.print_json: it parses and dumps again, undoing the escapes of json_text.
    text = JSONHighlighter()(Text(json_text(data)))
    text.no_wrap = True
    console.print(text, soft_wrap=True)


def search_table(candidates: Sequence[Candidate]) -> Table:
    table = Table(show_header=True, header_style="bold", expand=True)
    table.add_column("#", justify="right", width=3)
    table.add_column("score", justify="right", width=7)
    table.add_column("source", overflow="fold", ratio=2)
    table.add_column("snippet", ratio=5)
    for rank, c in enumerate(candidates, start=1):
        table.add_row(
            str(rank),
            f"{c.score:.3f}",
            plain(c.chunk.location.cite(display_path(c.chunk.source))),
            plain(snippet(c.chunk.text)),
        )
    return table


def trace_table(trace: Sequence[StageTrace]) -> Table:
    table = Table(title="trace", show_header=True, header_style="bold")
    for name, justify in (
        ("stage", "left"),
        ("ms", "right"),
        ("in", "right"),
        ("out", "right"),
        ("detail", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for t in trace:
        detail = ", ".join(f"{k}={v}" for k, v in t.detail.items())
        table.add_row(plain(t.stage), f"{t.ms:.1f}", str(t.n_in), str(t.n_out), plain(detail))
    return table


def print_sources(console: Console, answer: Answer) -> None:
    if not answer.citations:
        return
    console.print("\n[bold]Sources[/bold]")
    _print_source_lines(console, answer.citations)
    if answer.unsupported_sentences:
        console.print(
            f"[yellow]{len(answer.unsupported_sentences)} sentence(s) are not supported by any source: check them.[/yellow]"
        )


def print_footer(console: Console, answer: Answer) -> None:
    """What follows an answer's text, the same at every door: its sources (or the note to check
    them), a decline's closest passages, and whether the index is behind the files."""
    print_sources(console, answer)
    print_closest(console, answer)
    print_freshness(console, answer)


CLOSEST_HEADING = "Closest passages (they did not answer it)"


def print_closest(console: Console, answer: Answer) -> None:
    """Under a decline, where the tool looked: file and place (as rag show opens it), heading, and
    the passage's line closest to the question. Plain data, never numbered like a citation."""
    if not answer.declined or not answer.closest:
        return
    console.print(f"\n[bold]{CLOSEST_HEADING}[/bold]")
    for p in answer.closest:
        heading = f"  ({p.heading})" if p.heading else ""
        console.print(
            Text.assemble(
                "  ", plain(p.location.cite(display_path(p.source))), Text(visible(heading), style="dim")
            )
        )
        console.print(Text.assemble("      ", plain(p.snippet)))


def print_freshness(console: Console, answer: Answer) -> None:
    """Notes that the index is behind the files: a source that changed since it was indexed, and, on
    a decline, files written since the last ingest (they may hold the answer)."""
    for source in answer.changed_sources:
        console.print(
            Text.assemble(
                ("note: ", "yellow"),
                plain(display_path(source)),
                (" changed since it was indexed: run `rag ingest`", "yellow"),
            )
        )
    if answer.declined and answer.newer_files:
        console.print(
            f"[yellow]note: {answer.newer_files} file(s) in the indexed folders are newer than the index: "
            "run `rag ingest` and ask again[/yellow]"
        )


def _print_source_lines(console: Console, citations: Sequence[Citation]) -> None:
    for c in citations:
        flag = "" if c.supported else "  (not supported by this source: check it)"
        console.print(
            Text.assemble(f"  [{c.n}] ", plain(c.location.cite(display_path(c.source))), (flag, "yellow"))
        )
        for sentence in c.paraphrases:
            # Attached by meaning after the sentence was shown, so no [n] in the answer points here.
            console.print(Text.assemble("      ", ("says in other words: ", "dim"), plain(sentence)))
        if c.warning:
            console.print(Text.assemble("      ", (f"warning: {visible(c.warning)}", "red")))
