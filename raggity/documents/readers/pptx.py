"""PowerPoint files (.pptx): one section per slide, in the deck's order, headed by the slide's title,
with its text, its tables as rows and its speaker notes; each cited as `slide 7`. The slide's
pictures are read by OCR when `[ingest] ocr` allows, cited as `slide 7 (image, OCR)` (pictures.py).

Read with the standard library (package.py, safe_xml.py): see docs/ingestion.md for why.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from raggity.core.types import Document
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS
from raggity.documents.readers.ocr_options import DEFAULT_OCR, OcrOptions
from raggity.documents.readers.outline import Outline
from raggity.documents.readers.package import Package
from raggity.documents.readers.pictures import PICTURE_MARK, Pictures, is_picture
from raggity.documents.readers.safe_xml import parse_xml
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

_TITLES = frozenset({"title", "ctrTitle"})
# Placeholders of a notes page that are not the notes: the slide's picture, its number, header, date.
_NOT_NOTES = frozenset({"sldImg", "sldNum", "hdr", "ftr", "dt"})


def pptx_document(
    data: bytes, source: str, *, max_chars: int = DEFAULT_MAX_CHARS, ocr: OcrOptions = DEFAULT_OCR
) -> Document:
    package = Package(data, "PowerPoint file")
    part = main_part(package, "ppt/presentation.xml")
    presentation = parse_xml(package.read(part), part)
    rels = relationships(package, part)
    outline = Outline(max_chars)
    pictures = Pictures(source, ocr)
    slide_list = child(presentation, "sldIdLst")
    slide_ids = [] if slide_list is None else children(slide_list, "sldId")
    for number, slide_id in enumerate(slide_ids, start=1):
        target = rels.get(relationship_id(slide_id))
        if target is None or not package.has(target[1]):
            continue
        outline.place(number, "slide{s} {n}")
        slide = parse_xml(package.read(target[1]), target[1])
        title, texts = _shapes(slide)
        outline.heading(title or f"Slide {number}", 1)
        for text in texts:
            outline.block(text)
        notes = _notes(package, target[1])
        if notes:
            outline.block("Notes: " + notes)
        for part in _pictures(package, slide, target[1]):
            outline.picture(pictures.text(part, package.read(part)), PICTURE_MARK)
    pictures.finish()
    return outline.document(source, "pptx")


def _pictures(package: Package, slide: ET.Element, slide_part: str) -> list[str]:
    """The picture parts a slide shows, in shape order, each once; linked (external) ones are not
    in the relationships read (xml_names.relationships), so never fetched."""
    rels = relationships(package, slide_part)
    found: list[str] = []
    for blip in descendants(slide, "blip"):
        target = rels.get(attr(blip, "embed"))
        if target is not None and is_picture(target[1]) and package.has(target[1]) and target[1] not in found:
            found.append(target[1])
    return found


def _shapes(slide: ET.Element) -> tuple[str, list[str]]:
    """(the title, the other texts in shape order) of a slide, groups included."""
    title = ""
    texts: list[str] = []
    tree = next((e for e in slide.iter() if local(e.tag) == "spTree"), None)
    stack = [] if tree is None else list(reversed(list(tree)))
    while stack:
        shape = stack.pop()
        name = local(shape.tag)
        if name == "grpSp":
            stack.extend(reversed(list(shape)))
        elif name == "sp":
            text = _text_body(shape)
            if not title and _placeholder(shape) in _TITLES:
                title = " ".join(text.split())
            elif text:
                texts.append(text)
        elif name == "graphicFrame":
            for table in descendants(shape, "tbl"):
                rows = [
                    " | ".join(_text_body(cell) for cell in children(row, "tc"))
                    for row in children(table, "tr")
                ]
                texts.append("\n".join(row for row in rows if row.strip(" |")))
    return title, texts


def _placeholder(shape: ET.Element) -> str:
    found = next((e for e in shape.iter() if local(e.tag) == "ph"), None)
    return "" if found is None else attr(found, "type", "body")


def _text_body(element: ET.Element) -> str:
    lines = []
    for paragraph in descendants(element, "p"):
        parts: list[str] = []
        for run in paragraph:
            if local(run.tag) in ("r", "fld"):
                parts.extend(t.text or "" for t in run if local(t.tag) == "t")
            elif local(run.tag) == "br":
                parts.append("\n")
        line = "".join(parts).strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


def _notes(package: Package, slide_part: str) -> str:
    for kind, target in relationships(package, slide_part).values():
        if kind == "notesSlide" and package.has(target):
            notes = parse_xml(package.read(target), target)
            texts = [
                _text_body(shape)
                for shape in descendants(notes, "sp")
                if _placeholder(shape) not in _NOT_NOTES
            ]
            return "\n".join(text for text in texts if text)
    return ""
