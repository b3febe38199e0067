"""XML parts of documents parsed with expat into ElementTree elements, refusing any DTD.

Office, OpenDocument and EPUB parts never need a document type declaration; with one, a few hundred
bytes can declare entities that expand to gigabytes ("billion laughs") or name external files to
read. So a DOCTYPE is refused outright, before any entity is declared. The number of elements is
bounded too, so that a part cannot build a tree larger than its text is worth.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any
from xml.parsers import expat

from raggity.ingest.readers.errors import UnreadableFileError

# A 100,000-row sheet of ten columns has about 1.1 million elements.
MAX_ELEMENTS = 3_000_000


class _RefusedError(Exception):
    """Raised from an expat handler; expat passes it through Parse()."""


def parse_xml(data: bytes, what: str, *, max_elements: int = MAX_ELEMENTS) -> ET.Element:
    """The root element of `data`. Tags are `{namespace}local` as in ElementTree.

    Raises UnreadableFileError naming `what` for a DTD, too many elements or malformed XML."""
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate(namespace_separator="}")
    count = 0

    def start(tag: str, attributes: dict[str, str]) -> None:
        nonlocal count
        count += 1
        if count > max_elements:
            raise _RefusedError(f"{what} has more than {max_elements:,} XML elements")
        builder.start(_name(tag), {_name(key): value for key, value in attributes.items()})

    def refuse_dtd(*_: Any) -> None:
        raise _RefusedError(f"{what} declares a DTD (entity expansion is refused)")

    parser.StartDoctypeDeclHandler = refuse_dtd
    parser.EntityDeclHandler = refuse_dtd
    # External entities are never resolved: with no handler, expat reports them as an error.
    parser.StartElementHandler = start
    parser.EndElementHandler = lambda tag: builder.end(_name(tag))
    parser.CharacterDataHandler = builder.data
    parser.buffer_text = True
    parser.ordered_attributes = False
    try:
        parser.Parse(data, True)
    except _RefusedError as exc:
        raise UnreadableFileError(str(exc)) from exc
    except expat.ExpatError as exc:
        raise UnreadableFileError(f"corrupt {what}: {expat.ErrorString(exc.code)}") from exc
    root: ET.Element = builder.close()
    return root


def _name(tag: str) -> str:
    # expat writes "uri}local" with this separator; ElementTree writes "{uri}local".
    return "{" + tag if "}" in tag else tag
