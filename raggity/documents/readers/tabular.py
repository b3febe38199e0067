"""Rows of a table as lines of `header: value` pairs, and CSV files read that way.

A row far down a sheet says nothing without its header, and a chunk of rows 400-420 does not hold
the header: so every row names its columns (`Item: lamp; Cost: 1200`). A table's first row is its
header when every cell of it is text that is not a number; otherwise the columns are named by letter
(A, B, C...) as in a spreadsheet. Each CSV row is cited by its line in the file (`row 14`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from raggity.core.types import Document
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS, UnreadableFileError
from raggity.documents.readers.outline import Outline
from raggity.documents.readers.text import decode_bytes

_SNIFF_CHARS = 16_384
# The csv module's own bound, 131,072 characters a field, is kept: a longer cell is no table, and
# the bound is the module's global state, shared with everything else in the process.


def column_letters(index: int) -> str:
    """`A` for 0, `Z` for 25, `AA` for 26: how spreadsheets name columns."""
    letters = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        letters = chr(65 + remainder) + letters
    return letters


def is_header(cells: Sequence[str]) -> bool:
    filled = [cell.strip() for cell in cells if cell.strip()]
    return len(filled) == len(cells) and all(not _is_number(cell) for cell in filled)


def header_names(first: Sequence[str], width: int, *, offset: int = 0) -> list[str]:
    """Column names: the header's cells where it has them, else the column's letter."""
    return [
        (first[k].strip() if k < len(first) and first[k].strip() else column_letters(offset + k))
        for k in range(width)
    ]


def row_line(names: Sequence[str], cells: Sequence[str]) -> str:
    """`Item: lamp; Cost: 1200`, empty cells left out."""
    return "; ".join(
        f"{names[k] if k < len(names) else column_letters(k)}: {' '.join(cell.split())}"
        for k, cell in enumerate(cells)
        if cell.strip()
    )


def csv_document(data: bytes, source: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> Document:
    text = decode_bytes(data)
    dialect: type[csv.Dialect] | csv.Dialect
    try:
        dialect = csv.Sniffer().sniff(text[:_SNIFF_CHARS], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel_tab if source.lower().endswith(".tsv") else csv.excel
    outline = Outline(max_chars)
    names: list[str] | None = None
    header: tuple[int, list[str]] | None = None  # kept until a row follows it
    reader = csv.reader(io.StringIO(text, newline=""), dialect)
    try:
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue
            if names is None:
                names = header_names(cells if is_header(cells) else [], len(cells))
                if is_header(cells):
                    header = (reader.line_num, cells)
                    continue
            header = None
            outline.place(reader.line_num, "row{s} {n}")
            outline.line(row_line(names, cells))
    except csv.Error as exc:
        raise UnreadableFileError(f"malformed CSV at line {reader.line_num}: {exc}") from exc
    if header is not None and outline.length == 0:
        # A file of one row is its content, not a header.
        outline.place(header[0], "row{s} {n}")
        outline.line(row_line(header_names([], len(header[1])), header[1]))
    return outline.document(source, "csv")


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True
