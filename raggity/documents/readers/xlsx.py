"""Excel files (.xlsx, .xlsm): one section per sheet, in the workbook's order, each row a line of
`header: value` pairs (tabular.py), cited as the cell range it covers: `Costs!A14:D30`.

A formula is read as the value Excel or LibreOffice saved with it; a file written by a program that
saves no values (openpyxl) has none, and the formula itself is read (`=B2*C2`). Dates are numbers
with a date format: they are read as ISO dates. Macros are never run: only XML parts are read.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import datetime, timedelta

from raggity.core.places import place_title
from raggity.core.types import Document
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS
from raggity.documents.readers.outline import Outline
from raggity.documents.readers.package import Package
from raggity.documents.readers.safe_xml import iter_xml, parse_xml
from raggity.documents.readers.tabular import column_letters, header_names, is_header, row_line
from raggity.documents.readers.xml_names import (
    attr,
    child,
    children,
    descendants,
    local,
    main_part,
    relationship_id,
    relationships,
)

_CELL = re.compile(r"([A-Z]{1,3})(\d+)")
# Built-in number formats that show a date or time (ECMA-376 18.8.30).
_DATE_FORMATS = frozenset({*range(14, 23), 45, 46, 47})
_DATE_CODE = re.compile(r"[dmyhs]", re.IGNORECASE)
_QUOTED = re.compile(r'"[^"]*"|\[[^\]]*\]')
_EPOCH = datetime(1899, 12, 30)


def xlsx_document(data: bytes, source: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> Document:
    package = Package(data, "Excel file")
    part = main_part(package, "xl/workbook.xml")
    workbook = parse_xml(package.read(part), part)
    rels = relationships(package, part)
    strings = _shared_strings(package, rels)
    dates = _date_styles(package, rels)
    outline = Outline(max_chars)
    sheets = child(workbook, "sheets")
    for sheet in [] if sheets is None else children(sheets, "sheet"):
        target = rels.get(relationship_id(sheet))
        if target is None or target[0] != "worksheet" or not package.has(target[1]):
            continue
        rows = _rows(iter_xml(package.read(target[1]), target[1], "row"), strings, dates)
        _sheet(outline, attr(sheet, "name"), rows)
    return outline.document(source, "xlsx")


def _sheet(outline: Outline, name: str, rows: list[tuple[int, dict[int, str]]]) -> None:
    rows = [(number, cells) for number, cells in rows if any(v.strip() for v in cells.values())]
    if not rows:
        return
    low = min(min(cells) for _, cells in rows)
    high = max(max(cells) for _, cells in rows)
    template = f"{_sheet_reference(name)}!{column_letters(low)}{{first}}:{column_letters(high)}{{last}}"
    first = [rows[0][1].get(k, "") for k in range(low, high + 1)]
    # A sheet of one row is its content, not a header (odfpy's chinese_spreadsheet.ods).
    header = is_header(first) and len(rows) > 1
    names = header_names(first if header else [], high - low + 1, offset=low)
    outline.place(rows[0][0], template)
    outline.heading(name, 1)
    for number, cells in rows[1:] if header else rows:
        outline.place(number, template)
        outline.line(row_line(names, [cells.get(k, "") for k in range(low, high + 1)]))


def _sheet_reference(name: str) -> str:
    """The sheet's name as a formula writes it: quoted unless it is letters, digits and underscores."""
    title = place_title(name)
    return title if re.fullmatch(r"\w+", title) else "'" + title.replace("'", "''") + "'"


def _rows(
    elements: Iterator[ET.Element], strings: list[str], dates: frozenset[int]
) -> list[tuple[int, dict[int, str]]]:
    """(row number, {column index: text}) of each row that has a value, in order."""
    rows: list[tuple[int, dict[int, str]]] = []
    number = 0
    for row in elements:
        number = int(attr(row, "r")) if attr(row, "r").isdigit() else number + 1
        cells: dict[int, str] = {}
        for position, cell in enumerate(children(row, "c")):
            match = _CELL.fullmatch(attr(cell, "r"))
            column = _column_index(match.group(1)) if match else (max(cells) + 1 if cells else position)
            value = _value(cell, strings, dates)
            if value:
                cells[column] = value
        if cells:
            rows.append((number, cells))
    return rows


def _column_index(letters: str) -> int:
    index = 0
    for letter in letters:
        index = index * 26 + ord(letter) - 64
    return index - 1


def _value(cell: ET.Element, strings: list[str], dates: frozenset[int]) -> str:
    kind = attr(cell, "t", "n")
    value = child(cell, "v")
    raw = "" if value is None or value.text is None else value.text
    if kind == "inlineStr":
        inline = child(cell, "is")
        return "" if inline is None else "".join(t.text or "" for t in descendants(inline, "t"))
    if not raw:
        formula = child(cell, "f")
        return "=" + formula.text if formula is not None and formula.text else ""
    if kind == "s":
        return strings[int(raw)] if raw.isdigit() and int(raw) < len(strings) else ""
    if kind == "b":
        return "TRUE" if raw == "1" else "FALSE"
    if kind in ("str", "e"):
        return raw
    style = attr(cell, "s")
    try:
        number = float(raw)
    except ValueError:
        return raw
    if style.isdigit() and int(style) in dates and 0 < number < 2_958_466:
        moment = _EPOCH + timedelta(days=number)
        return (
            moment.date().isoformat()
            if number == int(number)
            else moment.isoformat(sep=" ", timespec="minutes")
        )
    return format(number, ".15g")


def _shared_strings(package: Package, rels: dict[str, tuple[str, str]]) -> list[str]:
    part = next((target for kind, target in rels.values() if kind == "sharedStrings"), None)
    if part is None or not package.has(part):
        return []
    table = parse_xml(package.read(part), part)
    # Phonetic runs (rPh) are reading aids for East Asian text, not part of the string.
    return [
        "".join(t.text or "" for t in item.iter() if local(t.tag) == "t" and not _in_phonetic(item, t))
        for item in children(table, "si")
    ]


def _in_phonetic(item: ET.Element, text: ET.Element) -> bool:
    return any(text in list(ph.iter()) for ph in children(item, "rPh"))


def _date_styles(package: Package, rels: dict[str, tuple[str, str]]) -> frozenset[int]:
    """Indexes of cell styles (cellXfs) whose number format shows a date or time."""
    part = next((target for kind, target in rels.values() if kind == "styles"), None)
    if part is None or not package.has(part):
        return frozenset()
    styles = parse_xml(package.read(part), part)
    custom: set[int] = set()
    formats = child(styles, "numFmts")
    for number_format in [] if formats is None else children(formats, "numFmt"):
        if (
            _DATE_CODE.search(_QUOTED.sub("", attr(number_format, "formatCode")))
            and attr(number_format, "numFmtId").isdigit()
        ):
            custom.add(int(attr(number_format, "numFmtId")))
    cell_formats = child(styles, "cellXfs")
    found: set[int] = set()
    for index, xf in enumerate([] if cell_formats is None else children(cell_formats, "xf")):
        fmt = int(attr(xf, "numFmtId", "0")) if attr(xf, "numFmtId", "0").isdigit() else 0
        if fmt in _DATE_FORMATS or fmt in custom:
            found.add(index)
    return frozenset(found)
