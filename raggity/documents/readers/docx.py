"""Word files (.docx): paragraphs, headings, lists, tables as rows and footnotes, with numbered paragraphs.

Read with the standard library (package.py, safe_xml.py): see docs/ingestion.md for why not
python-docx. Tracked changes are read as accepted: inserted text is kept, deleted and moved-away
text is not. A text box's fallback copy (mc:Fallback) is skipped, so its text appears once.
Paragraphs are numbered from the top (headings, list items and each table counted, empty ones not),
and each is cited as `paragraph 14`, or `heading "Budget" (paragraph 14)` under a heading. Pictures
stored in the file are read by OCR when `[ingest] ocr` allows, cited at their paragraph with
`(image, OCR)` after it (pictures.py).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from raggity.core.places import place_title
from raggity.core.types import Document
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS
from raggity.documents.readers.ocr_options import DEFAULT_OCR, OcrOptions
from raggity.documents.readers.outline import Outline
from raggity.documents.readers.package import Package
from raggity.documents.readers.pictures import PICTURE_MARK, Pictures, is_picture
from raggity.documents.readers.safe_xml import parse_xml
from raggity.documents.readers.xml_names import attr, child, children, local, main_part, relationships

_SKIPPED = frozenset({"Fallback", "moveFrom", "del", "delText", "instrText", "footnotes", "endnotes"})
_HEADING_NAME = re.compile(r"heading\s*(\d)", re.IGNORECASE)


def docx_document(
    data: bytes, source: str, *, max_chars: int = DEFAULT_MAX_CHARS, ocr: OcrOptions = DEFAULT_OCR
) -> Document:
    package = Package(data, "Word file")
    part = main_part(package, "word/document.xml")
    root = parse_xml(package.read(part), part)
    body = child(root, "body")
    pictures = _Pictures(package, part, Pictures(source, ocr))
    reader = _Reader(*_styles(package), Outline(max_chars), pictures)
    if body is not None:
        reader.blocks(body)
    for note_part in _notes(package, part):
        reader.footnotes(parse_xml(package.read(note_part), note_part))
    pictures.ocr.finish()
    return reader.outline.document(source, "docx")


class _Pictures:
    """The pictures a paragraph shows (DrawingML `a:blip`, VML `v:imagedata`), read from the package."""

    def __init__(self, package: Package, part: str, ocr: Pictures) -> None:
        self.package = package
        self.rels = {rid: target for rid, (_, target) in relationships(package, part).items()}
        self.ocr = ocr

    def texts(self, paragraph: ET.Element) -> list[str]:
        parts = [
            self.rels.get(attr(node, "embed") or attr(node, "id"), "")
            for node in paragraph.iter()
            if local(node.tag) in ("blip", "imagedata")
        ]
        found = [p for p in dict.fromkeys(parts) if is_picture(p) and self.package.has(p)]
        return [self.ocr.text(p, self.package.read(p)) for p in found]


class _Reader:
    def __init__(
        self, levels: dict[str, int], lists: frozenset[str], outline: Outline, pictures: _Pictures
    ) -> None:
        self.levels = levels
        self.lists = lists
        self.outline = outline
        self.pictures = pictures
        self.paragraph = 0
        self.template = "paragraph{s} {n}"

    def blocks(self, container: ET.Element) -> None:
        for element in container:
            name = local(element.tag)
            if name == "p":
                self._paragraph(element)
            elif name == "tbl":
                self._table(element)
            elif name in ("sdt", "sdtContent", "customXml", "ins"):
                self.blocks(element)  # content controls and inserted blocks hold paragraphs

    def footnotes(self, root: ET.Element) -> None:
        notes = [note for note in root if attr(note, "type") in ("", "normal")]
        if notes:
            self._next_place()
            self.outline.heading("Footnotes", 1)
            for note in notes:
                text = " ".join(_text(p) for p in children(note, "p")).strip()
                if text:
                    self._next_place()
                    self.outline.block(f"[{attr(note, 'id')}] {text}")

    def _paragraph(self, element: ET.Element) -> None:
        text = _text(element).strip()
        pictures = [found for found in self.pictures.texts(element) if found]
        if not text:
            if pictures:
                self._next_place()  # a paragraph that is a picture: numbered like any other
                for found in pictures:
                    self.outline.picture(found, PICTURE_MARK)
            return
        self._text_paragraph(element, text)
        for found in pictures:
            self.outline.picture(found, PICTURE_MARK)

    def _text_paragraph(self, element: ET.Element, text: str) -> None:
        properties = child(element, "pPr")
        level = self._level(properties)
        if level is not None:
            self.template = f'heading "{place_title(text)}" (paragraph{{s}} {{n}})'
            self._next_place()
            self.outline.heading(text, level)
            return
        self._next_place()
        style = None if properties is None else child(properties, "pStyle")
        numbered = properties is not None and (
            child(properties, "numPr") is not None or (style is not None and attr(style, "val") in self.lists)
        )
        self.outline.block(f"- {text}" if numbered else text)

    def _table(self, element: ET.Element) -> None:
        rows = []
        for row in children(element, "tr"):
            cells = [
                " ".join(_text(p).strip() for p in c.iter() if local(p.tag) == "p")
                for c in children(row, "tc")
            ]
            if any(cell.strip() for cell in cells):
                rows.append(" | ".join(cell.strip() for cell in cells))
        if rows:
            self._next_place()
            self.outline.block("\n".join(rows))

    def _level(self, properties: ET.Element | None) -> int | None:
        if properties is None:
            return None
        outline = child(properties, "outlineLvl")
        if outline is not None and attr(outline, "val").isdigit() and int(attr(outline, "val")) < 9:
            return int(attr(outline, "val")) + 1
        style = child(properties, "pStyle")
        return None if style is None else self.levels.get(attr(style, "val"))

    def _next_place(self) -> None:
        self.paragraph += 1
        self.outline.place(self.paragraph, self.template)


def _text(element: ET.Element) -> str:
    """A paragraph's visible text, as accepted with its tracked changes."""
    parts: list[str] = []
    stack = [element]
    while stack:
        node = stack.pop()
        name = local(node.tag)
        if name in _SKIPPED:
            continue
        if name == "t" and node.text:
            parts.append(node.text)
        elif name == "tab":
            parts.append("\t")
        elif name in ("br", "cr"):
            parts.append("\n")
        elif name in ("noBreakHyphen", "softHyphen"):
            parts.append("-" if name == "noBreakHyphen" else "")
        elif name in ("footnoteReference", "endnoteReference"):
            parts.append(f"[{attr(node, 'id')}]")
        stack.extend(reversed(list(node)))
    return "".join(parts)


def _styles(package: Package) -> tuple[dict[str, int], frozenset[str]]:
    """(paragraph style id -> heading level, the list styles), from styles.xml. A heading style has
    an outline level or a name like "heading 2" (or "Title"), itself or in a style it is based on;
    a list style numbers its paragraphs (python-docx's "List Bullet")."""
    if not package.has("word/styles.xml"):
        return {}, frozenset()
    styles: dict[str, tuple[str, int | None, str]] = {}
    lists: set[str] = set()
    for style in parse_xml(package.read("word/styles.xml"), "word/styles.xml"):
        if local(style.tag) != "style" or attr(style, "type") != "paragraph":
            continue
        name_element = child(style, "name")
        properties = child(style, "pPr")
        outline = None if properties is None else child(properties, "outlineLvl")
        base = child(style, "basedOn")
        if properties is not None and child(properties, "numPr") is not None:
            lists.add(attr(style, "styleId"))
        level = (
            int(attr(outline, "val")) + 1 if outline is not None and attr(outline, "val").isdigit() else None
        )
        styles[attr(style, "styleId")] = (
            "" if name_element is None else attr(name_element, "val"),
            level,
            "" if base is None else attr(base, "val"),
        )
    levels: dict[str, int] = {}
    for style_id in styles:
        current, seen = style_id, 0
        while current in styles and seen < 10:
            name, level, based = styles[current]
            found = level or _level_by_name(name)
            if found is not None:
                if found <= 9:
                    levels[style_id] = found
                break
            current, seen = based, seen + 1
    return levels, frozenset(lists)


def _level_by_name(name: str) -> int | None:
    if name.strip().lower() == "title":
        return 1
    match = _HEADING_NAME.fullmatch(name.strip())
    return int(match.group(1)) if match else None


def _notes(package: Package, part: str) -> list[str]:
    return [
        target
        for kind, target in relationships(package, part).values()
        if kind == "footnotes" and package.has(target)
    ]
