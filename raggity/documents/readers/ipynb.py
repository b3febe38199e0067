"""Jupyter notebooks (.ipynb): markdown and code cells in order, each cited by its number (`cell 12`).

Markdown headings (`## Step 2`), and nbformat 3's heading cells, are the notebook's headings. A
cell's text output (a print, a result, an error's message) is read when it is short; images, HTML,
widget state and long outputs are not: they are data, not prose, and a plot's bytes would swamp the
index. Read with the standard library's json: nbformat validates a notebook against its schema,
which this does not need.
"""

from __future__ import annotations

import json
import re
from typing import Any

from raggity.core.types import Document
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS, UnreadableFileError
from raggity.documents.readers.outline import Outline
from raggity.documents.readers.text import decode_bytes

# An output longer than this is a data dump (a DataFrame's thousand rows, a training log).
MAX_OUTPUT_CHARS = 2_000
_ATX = re.compile(r" {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*")
_FENCE = re.compile(r" {0,3}(```|~~~)")


def ipynb_document(data: bytes, source: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> Document:
    try:
        notebook = json.loads(decode_bytes(data))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise UnreadableFileError(f"corrupt notebook: {str(exc).splitlines()[0][:80]}") from exc
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        # nbformat 3 kept cells in worksheets; anything else is not a notebook.
        worksheets = notebook.get("worksheets") if isinstance(notebook, dict) else None
        cells = [c for w in worksheets or [] if isinstance(w, dict) for c in w.get("cells") or []]
        if not cells:
            raise UnreadableFileError("not a Jupyter notebook (no cells)")
    outline = Outline(max_chars)
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            continue
        outline.place(number, "cell{s} {n}")
        kind = cell.get("cell_type")
        text = _joined(cell.get("source", cell.get("input", "")))
        if kind == "markdown":
            _markdown(outline, text)
        elif kind == "heading":
            # nbformat 3 kept headings in cells of their own, with a level (nbformat's test3.ipynb).
            level = cell.get("level")
            outline.heading(text, level if isinstance(level, int) and 1 <= level <= 6 else 1)
        elif kind == "code":
            outline.block(text)
            for output in cell.get("outputs") or []:
                shown = _output_text(output)
                if shown:
                    outline.block("Output:\n" + shown)
        else:
            outline.block(text)
    return outline.document(source, "ipynb")


def _markdown(outline: Outline, text: str) -> None:
    """A markdown cell: its ATX headings as headings, the paragraphs between them as blocks."""
    lines: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _ATX.fullmatch(line)
        if heading is None:
            lines.append(line)
            continue
        outline.block("\n".join(lines))
        lines = []
        outline.heading(heading.group(2), len(heading.group(1)))
    outline.block("\n".join(lines))


def _output_text(output: Any) -> str:
    if not isinstance(output, dict):
        return ""
    kind = output.get("output_type")
    if kind == "stream":
        text = _joined(output.get("text"))
    elif kind in ("execute_result", "display_data", "pyout"):
        data: dict[str, Any] = output["data"] if isinstance(output.get("data"), dict) else output
        text = _joined(data.get("text/plain", data.get("text", "")))
    elif kind in ("error", "pyerr"):
        text = f"{output.get('ename', '')}: {output.get('evalue', '')}"
    else:
        return ""
    text = text.strip()
    return text if len(text) <= MAX_OUTPUT_CHARS else ""


def _joined(value: Any) -> str:
    """Notebook text is a string or a list of lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return ""
