"""E-books (.epub): chapters in the order of the book's spine, with the book's own headings; each
chapter cited by its number and first heading: `chapter 3 "The Harbour"`.

The package is a zip (package.py bounds it); its container and OPF files are XML parsed with any
DTD refused (safe_xml.py); chapters are XHTML, laid out as HTML pages are (html_layout.py), with
scripts, styles and navigation left out. DRM-protected books (META-INF/encryption.xml naming the
chapters) are skipped as encrypted. Nothing is fetched: remote resources are not read.
"""

from __future__ import annotations

import posixpath
from urllib.parse import unquote

from raggity.core.places import place_title
from raggity.core.types import Document
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS, UnreadableFileError
from raggity.documents.readers.html_text import html_text
from raggity.documents.readers.outline import Outline
from raggity.documents.readers.package import Package
from raggity.documents.readers.safe_xml import parse_xml
from raggity.documents.readers.text import decode_bytes
from raggity.documents.readers.xml_names import attr, child, children, descendants

_XHTML = ("application/xhtml+xml", "text/html")


def epub_document(data: bytes, source: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> Document:
    package = Package(data, "e-book")
    if package.has("META-INF/encryption.xml"):
        raise UnreadableFileError("encrypted e-book (DRM)")
    container = parse_xml(package.read("META-INF/container.xml"), "META-INF/container.xml")
    rootfile = next(iter(descendants(container, "rootfile")), None)
    if rootfile is None or not package.has(attr(rootfile, "full-path")):
        raise UnreadableFileError("corrupt e-book: no package document")
    opf_path = attr(rootfile, "full-path")
    opf = parse_xml(package.read(opf_path), opf_path)
    folder = posixpath.dirname(opf_path)
    manifest = child(opf, "manifest")
    items = {
        attr(item, "id"): (
            posixpath.normpath(posixpath.join(folder, unquote(attr(item, "href")))),
            attr(item, "media-type"),
        )
        for item in ([] if manifest is None else children(manifest, "item"))
    }
    spine = child(opf, "spine")
    outline = Outline(max_chars)
    number = 0
    for itemref in [] if spine is None else children(spine, "itemref"):
        part, media = items.get(attr(itemref, "idref"), ("", ""))
        if media not in _XHTML or not package.has(part):
            continue
        text, headings = html_text(_decoded(package.read(part)), max_chars - outline.length)
        if not text.strip():
            continue
        number += 1
        title = place_title(headings[0].title) if headings else ""
        outline.place(number, f'chapter{{s}} {{n}} "{title}"' if title else "chapter{s} {n}")
        outline.section(text, headings)
    return outline.document(source, "epub")


def _decoded(data: bytes) -> str:
    return decode_bytes(data) if data.strip() else ""
