"""OpenDocument files (LibreOffice, OpenOffice): text (.odt) as Word files are read, spreadsheets
(.ods) as Excel files, presentations (.odp) as PowerPoint files, with the same kinds of citations.

Everything is in the package's content.xml (package.py, safe_xml.py). Tracked changes are read as
accepted: the deleted text kept in `text:tracked-changes` is left out. A spreadsheet's repeated
empty rows and columns (a sheet formatted down to row 1,048,576) cost nothing; a repeated cell that
holds text is read at most MAX_REPEAT times. A password-protected file is skipped as such.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from raggity.core.places import place_title
from raggity.core.types import Document
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS, UnreadableFileError
from raggity.documents.readers.outline import Outline
from raggity.documents.readers.package import Package
from raggity.documents.readers.safe_xml import parse_xml
from raggity.documents.readers.tabular import column_letters, header_names, is_header, row_line
from raggity.documents.readers.xml_names import attr, child, descendants, local

MAX_REPEAT = 1_000
# Inline elements whose text is not the document's running text.
_NOT_INLINE = frozenset({"note-body", "annotation", "tracked-changes", "bookmark-ref"})


def odt_document(data: bytes, source: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> Document:
    body = _body(data, "text", "OpenDocument text")
    reader = _TextReader(Outline(max_chars))
    reader.blocks(body)
    if reader.notes:
        reader.next_place()
        reader.outline.heading("Notes", 1)
        for citation, text in reader.notes:
            reader.next_place()
            reader.outline.block(f"[{citation}] {text}")
    return reader.outline.document(source, "odt")


def ods_document(data: bytes, source: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> Document:
    body = _body(data, "spreadsheet", "OpenDocument spreadsheet")
    outline = Outline(max_chars)
    for table in (e for e in body if local(e.tag) == "table"):
        _sheet(outline, attr(table, "name"), table)
    return outline.document(source, "ods")


def odp_document(data: bytes, source: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> Document:
    body = _body(data, "presentation", "OpenDocument presentation")
    outline = Outline(max_chars)
    for number, page in enumerate((e for e in body if local(e.tag) == "page"), start=1):
        outline.place(number, "slide{s} {n}")
        title, texts, notes = "", [], []
        for frame in page.iter():
            if local(frame.tag) != "frame":
                continue
            text = "\n".join(_inline(p).strip() for p in descendants(frame, "p") if _inline(p).strip())
            if attr(frame, "class") == "title" and not title:
                title = " ".join(text.split())
            elif text:
                texts.append(text)
        for note_frame in (n for n in page if local(n.tag) == "notes"):
            for frame in descendants(note_frame, "frame"):
                if attr(frame, "class") == "notes":
                    notes += [_inline(p).strip() for p in descendants(frame, "p") if _inline(p).strip()]
        outline.heading(title or f"Slide {number}", 1)
        for text in texts:
            outline.block(text)
        if notes:
            outline.block("Notes: " + "\n".join(notes))
    return outline.document(source, "odp")


def _body(data: bytes, kind: str, what: str) -> ET.Element:
    package = Package(data, what)
    if package.has("META-INF/manifest.xml"):
        manifest = parse_xml(package.read("META-INF/manifest.xml"), "META-INF/manifest.xml")
        if descendants(manifest, "encryption-data"):
            raise UnreadableFileError(f"encrypted or password-protected {what}")
    root = parse_xml(package.read("content.xml"), "content.xml")
    body = child(root, "body")
    found = None if body is None else child(body, kind)
    if found is None:
        raise UnreadableFileError(f"corrupt {what}: no office:{kind} in content.xml")
    return found


class _TextReader:
    def __init__(self, outline: Outline) -> None:
        self.outline = outline
        self.paragraph = 0
        self.template = "paragraph{s} {n}"
        self.notes: list[tuple[str, str]] = []

    def next_place(self) -> None:
        self.paragraph += 1
        self.outline.place(self.paragraph, self.template)

    def blocks(self, container: ET.Element, bullet: str = "") -> None:
        for element in container:
            name = local(element.tag)
            if name == "h":
                text = self._text(element)
                if text:
                    self.template = f'heading "{place_title(text)}" (paragraph{{s}} {{n}})'
                    self.next_place()
                    level = attr(element, "outline-level", "1")
                    self.outline.heading(text, int(level) if level.isdigit() and 0 < int(level) < 10 else 1)
            elif name == "p":
                text = self._text(element)
                if text:
                    self.next_place()
                    self.outline.block(bullet + text)
            elif name == "list":
                for item in element:
                    self.blocks(item, "- ")
            elif name == "table":
                rows = [
                    " | ".join(self._text(p) for p in descendants(row, "p"))
                    for row in element.iter()
                    if local(row.tag) == "table-row"
                ]
                rows = [row for row in rows if row.strip(" |")]
                if rows:
                    self.next_place()
                    self.outline.block("\n".join(rows))
            elif name in ("section", "list-item", "list-header", "index-body"):
                self.blocks(element, bullet)

    def _text(self, element: ET.Element) -> str:
        for note in descendants(element, "note"):
            citation = child(note, "note-citation")
            body = child(note, "note-body")
            if body is not None:
                text = " ".join(_inline(p).strip() for p in descendants(body, "p"))
                self.notes.append(("" if citation is None else (citation.text or ""), text.strip()))
        return " ".join(_inline(element).split())


def _inline(element: ET.Element) -> str:
    """The running text of a paragraph: spans, links, spaces (`text:s c=3`), tabs and line breaks."""
    parts: list[str] = [element.text or ""]
    for kid in element:
        name = local(kid.tag)
        if name == "s":
            count = attr(kid, "c", "1")
            parts.append(" " * min(int(count) if count.isdigit() else 1, 100))
        elif name == "tab":
            parts.append("\t")
        elif name == "line-break":
            parts.append("\n")
        elif name == "note":
            citation = child(kid, "note-citation")
            parts.append(f"[{'' if citation is None else citation.text or ''}]")
        elif name not in _NOT_INLINE:
            parts.append(_inline(kid))
        parts.append(kid.tail or "")
    return "".join(parts)


def _sheet(outline: Outline, name: str, table: ET.Element) -> None:
    rows: list[tuple[int, dict[int, str]]] = []
    number = 0
    for row in (r for r in table.iter() if local(r.tag) == "table-row"):
        repeat = _count(attr(row, "number-rows-repeated", "1"))
        cells = _cells(row)
        if not cells:
            number += repeat
            continue
        for _ in range(min(repeat, MAX_REPEAT)):
            number += 1
            rows.append((number, cells))
        number += max(0, repeat - MAX_REPEAT)
    if not rows:
        return
    low = min(min(cells) for _, cells in rows)
    high = max(max(cells) for _, cells in rows)
    title = place_title(name) or "Sheet"
    reference = title if title.replace("_", "").isalnum() else "'" + title.replace("'", "''") + "'"
    template = f"{reference}!{column_letters(low)}{{first}}:{column_letters(high)}{{last}}"
    first = [rows[0][1].get(k, "") for k in range(low, high + 1)]
    # A sheet of one row is its content, not a header (odfpy's chinese_spreadsheet.ods).
    header = is_header(first) and len(rows) > 1
    names = header_names(first if header else [], high - low + 1, offset=low)
    outline.place(rows[0][0], template)
    outline.heading(name, 1)
    for row_number, cells in rows[1:] if header else rows:
        outline.place(row_number, template)
        outline.line(row_line(names, [cells.get(k, "") for k in range(low, high + 1)]))


def _cells(row: ET.Element) -> dict[int, str]:
    cells: dict[int, str] = {}
    column = 0
    for cell in row:
        if local(cell.tag) not in ("table-cell", "covered-table-cell"):
            continue
        repeat = _count(attr(cell, "number-columns-repeated", "1"))
        text = "\n".join(_inline(p) for p in cell if local(p.tag) == "p").strip()
        if text:
            for k in range(min(repeat, MAX_REPEAT)):
                cells[column + k] = text
        column += repeat
    return cells


def _count(value: str) -> int:
    return int(value) if value.isdigit() and int(value) > 0 else 1
