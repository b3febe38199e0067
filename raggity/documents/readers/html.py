"""HTML files: the main content's text, parsed with selectolax (Lexbor), with h1-h6 headings and anchors.

The main content is the first of `main`, `[role=main]`, a single `article`, Sphinx's `div.body` and
`div.document`, else `body`. Inside it, navigation, page headers and footers, sidebars, tables of
contents, scripts, styles and hidden elements are dropped (see html_layout.py for the text layout).
Every element `id` and `<a name>` is kept as an Anchor at the offset where its text starts, and each
heading gets the anchor of the section that holds it (html_layout._anchors), so that a citation
opens the page at the right place; ids of forms, hidden elements and search boxes never do. The
extracted text has no file lines.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser, LexborNode

from raggity.core.types import Anchor, Document, Heading
from raggity.documents.readers.errors import DEFAULT_MAX_CHARS
from raggity.documents.readers.html_layout import TextLayout
from raggity.documents.readers.html_nesting import check_nesting
from raggity.documents.readers.source import open_source
from raggity.documents.readers.text import bom_encoding, decode_bytes, require_text

# The HTML standard's prescan looks at the first 1024 bytes; some pages put long comments first.
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE)
_PRESCAN_BYTES = 4096

_CONTENT_ROOTS = ("main", "[role=main]", "article", "div.body", "div.document")
# Page furniture, not content. Class names are those of common documentation generators:
# Sphinx (related, sphinxsidebar, headerlink), DocBook (navheader, navfooter), asciidoc (#footer), and
# Pygments' line numbers (linenos, inline or in a table column), which Sphinx, MkDocs and Jekyll emit:
# left in, "1def setup(app):" reached the model.
# Not <form>: ASP.NET pages wrap their whole body in one.
_DROPPED = (
    "script, style, noscript, template, svg, math, iframe, object, canvas, button, select, nav, aside,"
    " dialog, [hidden], [role=navigation], [role=banner], [role=contentinfo], [role=complementary],"
    " [role=search], .navheader, .navfooter, .related, .sphinxsidebar, .headerlink, .breadcrumbs, #footer,"
    " .linenos"
)
# Tables of contents restate the titles of other pages or sections: Sphinx's toctree and contents
# topic, DocBook's and asciidoc's toc. On Django's documentation contents.html, every title of the
# manual under one heading, was one of the five passages handed to the model for 11 of 28 FAQ
# questions. Only by these classes: a list of many links and little else is as often content (a
# release's stabilized APIs, the traits a type implements, a parameter's types), and was dropped
# when the rule went by links alone. A table of contents that says what each entry is (DocBook's
# list of SQL commands, "ABORT — abort the current transaction") is content too: one is dropped
# only when at least half its text is link text.
_TABLES_OF_CONTENTS = ".toctree-wrapper, .contents.topic, .toc, #toc"
_TOC_LINK_SHARE = 0.5
# A header or footer inside these is part of the content (an article's title, a section's notes).
_SECTIONING = frozenset({"article", "main", "section"})
# An id on these names the whole page: opening it there is no more precise than the bare path.
_PAGE = frozenset({"html", "body"})
# Never a citation's anchor, nor anything inside them: forms (a search box, a feedback form) and
# elements hidden by an attribute. Their text is still read: ASP.NET pages wrap the whole body in a form.
_NO_ANCHORS = (
    "form, [aria-hidden=true], [style*='display:none' i], [style*='display: none' i],"
    " [style*='visibility:hidden' i], [style*='visibility: hidden' i]"
)
# An element holding one of these is a form's furniture (Debian's SQLite pages: <div id=searchmenu>
# around the search form, hidden by a style sheet): its id is no anchor either.
_CONTROLS = "input, select, textarea"


def read_html(path: Path, *, max_chars: int = DEFAULT_MAX_CHARS) -> Document:
    with open_source(path) as stream:
        data = stream.read()
    text = decode_bytes(data, declared=declared_charset(data))
    check_nesting(text)
    tree = LexborHTMLParser(text, scripting=True)
    layout = TextLayout(max_chars)
    content = _content_root(tree)
    if content is not None:
        dropped = _dropped_nodes(content)
        unanchored = _unanchored(content)
        tables_of_contents = _tables_of_contents(content, dropped)
        _walk(content, dropped | tables_of_contents, unanchored, layout)
        if tables_of_contents and not layout.has_text():
            # Nothing but a table of contents and no title to stand for it: read it, as before.
            layout = TextLayout(max_chars)
            _walk(content, dropped, unanchored, layout)
    extracted, headings, anchors = layout.result()
    if not headings:
        # A page without headings still says what it is about: its <title> heads its text.
        extracted, headings, anchors = _with_title(_title(tree), extracted, headings, anchors)
    require_text(extracted)
    return Document(source=str(path), text=extracted, kind="html", headings=headings, anchors=anchors)


def declared_charset(data: bytes) -> str | None:
    """The codec named by a <meta charset> near the top, when Python knows it and no BOM overrides it."""
    if bom_encoding(data) is not None:
        return None
    match = _META_CHARSET.search(data[:_PRESCAN_BYTES])
    if match is None:
        return None
    try:
        name = codecs.lookup(match.group(1).decode("ascii")).name
    except LookupError:
        return None
    # A meta tag readable as ASCII cannot be in UTF-16 or UTF-32, and the standard says so too.
    return "utf-8" if name.startswith(("utf-16", "utf-32")) else name


def _content_root(tree: LexborHTMLParser) -> LexborNode | None:
    for selector in _CONTENT_ROOTS:
        found = tree.css(selector)
        # Several articles are a listing (a blog's front page): the whole body is the content.
        if len(found) == 1 or (found and selector != "article"):
            return found[0]
    return tree.body


def _dropped_nodes(content: LexborNode) -> set[int]:
    dropped = {node.mem_id for node in content.css(_DROPPED)}
    for node in content.css("header, footer"):
        parent = node.parent
        while parent is not None and parent.tag not in _SECTIONING and parent.mem_id != content.mem_id:
            parent = parent.parent
        inside_sectioning = parent is not None and parent.tag in _SECTIONING
        if not inside_sectioning:
            dropped.add(node.mem_id)
    return dropped


def _tables_of_contents(content: LexborNode, dropped: set[int]) -> set[int]:
    """The tables of contents inside `content` (never `content` itself) that are mostly links,
    from one pass that adds up each element's characters of text and of link text as it leaves it."""
    root = content.mem_id
    marked = {node.mem_id for node in content.css(_TABLES_OF_CONTENTS)} - {root}
    if not marked:
        return set()
    found: set[int] = set()
    # Per open element: [characters, characters inside a link], whitespace not counted; and whether
    # it is inside a link.
    totals: list[list[int]] = [[0, 0]]
    in_link: list[bool] = [False]
    for node, leaving in _in_order(content, dropped):
        if leaving:
            chars, linked = totals.pop()
            in_link.pop()
            if node.mem_id in marked and linked >= _TOC_LINK_SHARE * chars:
                found.add(node.mem_id)
            totals[-1][0] += chars
            totals[-1][1] += linked
        elif node.is_text_node:
            chars = len("".join((node.text_content or "").split()))
            totals[-1][0] += chars
            totals[-1][1] += chars if in_link[-1] else 0
        else:
            totals.append([0, 0])
            in_link.append(in_link[-1] or (node.tag == "a" and "href" in node.attributes))
    return found


def _unanchored(content: LexborNode) -> tuple[set[int], set[int]]:
    """(elements whose id and whose descendants' ids are no anchors, elements whose own id is none)."""
    muted = {node.mem_id for node in content.css(_NO_ANCHORS)}
    holders: set[int] = set()
    for control in content.css(_CONTROLS):
        parent = control.parent
        while parent is not None and parent.mem_id not in holders:
            holders.add(parent.mem_id)
            if parent.mem_id == content.mem_id:
                break
            parent = parent.parent
    return muted, holders


def _in_order(content: LexborNode, dropped: set[int]) -> Iterator[tuple[LexborNode, bool]]:
    """`content`'s elements and text nodes in document order, each element twice: entering
    (False), then leaving (True) after everything in it. Dropped elements and what they hold are
    left out. Iterative: a page may nest elements deeper than Python's recursion limit."""
    stack: list[tuple[LexborNode, bool]] = [(content, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving or node.is_text_node:
            yield node, leaving
            continue
        if not node.is_element_node or node.mem_id in dropped:
            continue
        yield node, False
        stack.append((node, True))
        child = node.last_child
        while child is not None:
            stack.append((child, False))
            child = child.prev


def _walk(
    content: LexborNode, dropped: set[int], unanchored: tuple[set[int], set[int]], layout: TextLayout
) -> None:
    muted, holders = unanchored
    silent: list[bool] = [False]  # per open element: whether its ids are no anchors
    for node, leaving in _in_order(content, dropped):
        if leaving:
            silent.pop()
            layout.end(node.tag or "")
        elif node.is_text_node:
            layout.data(node.text_content or "")
        else:
            tag = node.tag or ""
            silent.append(silent[-1] or node.mem_id in muted)
            quiet = silent[-1] or tag in _PAGE or node.mem_id in holders
            layout.start(tag, anchor=None if quiet else _anchor_name(tag, node.attributes))


def _anchor_name(tag: str, attributes: dict[str, str | None]) -> str | None:
    name = attributes.get("id") or (attributes.get("name") if tag == "a" else None)
    return name.strip() or None if name else None


def _title(tree: LexborHTMLParser) -> str:
    node = tree.css_first("title")
    return " ".join((node.text() if node is not None else "").split())


def _with_title(
    title: str, text: str, headings: tuple[Heading, ...], anchors: tuple[Anchor, ...]
) -> tuple[str, tuple[Heading, ...], tuple[Anchor, ...]]:
    if not title:
        return text, headings, anchors
    shift = len(title) + 2 if text else len(title)
    moved = tuple(Anchor(anchor.offset + shift, anchor.name) for anchor in anchors)
    body = f"{title}\n\n{text}" if text else title
    return body, (Heading(offset=0, level=1, title=title), *headings), moved
