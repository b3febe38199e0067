"""Element and attribute names by their local part, so Office's Transitional and Strict namespaces
(and OpenDocument's versions) read alike; and a package's parts found through its relationships."""

from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET
from functools import lru_cache

from raggity.documents.readers.package import Package
from raggity.documents.readers.safe_xml import parse_xml


@lru_cache(maxsize=4096)
def local(tag: str) -> str:
    # Cached: a sheet asks for the same few tags a million times.
    return tag.rsplit("}", 1)[-1]


def attr(element: ET.Element, name: str, default: str = "") -> str:
    """The attribute whose local name is `name`, in any namespace."""
    plain = element.get(name)
    if plain is not None:
        return plain
    for key, value in element.attrib.items():
        if local(key) == name:
            return value
    return default


def relationship_id(element: ET.Element) -> str:
    """The `r:id` of an element, which may also have a plain `id` of its own (a slide's number)."""
    for key, value in element.attrib.items():
        if key.startswith("{") and "relationships" in key and local(key) == "id":
            return value
    return ""


def children(element: ET.Element, name: str) -> list[ET.Element]:
    return [child for child in element if local(child.tag) == name]


def child(element: ET.Element, name: str) -> ET.Element | None:
    return next((c for c in element if local(c.tag) == name), None)


def descendants(element: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in element.iter() if local(e.tag) == name]


def relationships(package: Package, part: str) -> dict[str, tuple[str, str]]:
    """Relationship id -> (type's last path segment, target part) of `part` ("" for the package)."""
    folder, name = posixpath.split(part)
    rels = posixpath.join(folder, "_rels", name + ".rels")
    if not package.has(rels):
        return {}
    found: dict[str, tuple[str, str]] = {}
    for rel in parse_xml(package.read(rels), rels):
        if attr(rel, "TargetMode") == "External":
            continue  # a link or image on the web: never fetched
        target = attr(rel, "Target")
        resolved = (
            target.lstrip("/")
            if target.startswith("/")
            else posixpath.normpath(posixpath.join(folder, target))
        )
        found[attr(rel, "Id")] = (attr(rel, "Type").rsplit("/", 1)[-1], resolved)
    return found


def main_part(package: Package, default: str) -> str:
    """The package's main document part, as its relationships name it."""
    for kind, target in relationships(package, "").values():
        if kind == "officeDocument" and package.has(target):
            return target
    return default
