"""HTML inside other documents (an e-book's chapters, a mail's HTML part) laid out as HTML pages are
(html_layout.py): block elements end lines, h1-h6 are headings, tables are rows; scripts, styles,
navigation and embedded objects are left out. The page readers' content detection is not needed:
these are bodies of text, not web pages with furniture."""

from __future__ import annotations

from collections.abc import Iterator

from selectolax.lexbor import LexborHTMLParser, LexborNode

from raggity.core.types import Heading
from raggity.documents.readers.html_layout import TextLayout

_DROPPED = frozenset({"script", "style", "nav", "head", "svg", "math", "template", "iframe", "object"})


def html_text(html: str, max_chars: int) -> tuple[str, tuple[Heading, ...]]:
    """(text, headings) of an HTML body; raises TooMuchTextError past `max_chars`."""
    tree = LexborHTMLParser(html)
    layout = TextLayout(max(1, max_chars))
    if tree.body is not None:
        for node, leaving in _in_order(tree.body):
            if leaving:
                layout.end(node.tag or "")
            elif node.is_text_node:
                layout.data(node.text_content or "")
            else:
                layout.start(node.tag or "")
    text, headings, _ = layout.result()
    return text, headings


def _in_order(root: LexborNode) -> Iterator[tuple[LexborNode, bool]]:
    """Elements (entering, then leaving) and text nodes in document order; iterative, for deep books."""
    stack: list[tuple[LexborNode, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving or node.is_text_node:
            yield node, leaving
            continue
        if not node.is_element_node or (node.tag or "") in _DROPPED:
            continue
        yield node, False
        stack.append((node, True))
        kid = node.last_child
        while kid is not None:
            stack.append((kid, False))
            kid = kid.prev
