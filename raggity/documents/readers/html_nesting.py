"""Refuses HTML nested so deeply that parsing it would take minutes.

An HTML5 tree builder checks the stack of open elements at every block start tag, so a page that
opens tens of thousands of elements without closing them costs time quadratic in its length (Lexbor
needs 10 s for 500 KB of `<div>`). A linear pre-scan bounds that cost from above: every counted
start tag costs the depth it opens at. Browsers cap the depth too (Chromium at 512 elements).
"""

from __future__ import annotations

import re

from raggity.documents.readers.errors import UnreadableFileError

# Start tags times depth; legitimate pages stay below ~10 M (200,000 tags 50 deep).
MAX_NESTING_COST = 100_000_000

# A tag is only a tag once closed by ">": "<a <a <a" is one element to a parser, not three.
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)[^<>]*>")
# Elements that never stay open (void), or that the parser closes by itself when the next one starts.
_UNCOUNTED = frozenset(
    "area base br col embed hr img input link meta param source track wbr keygen frame basefont bgsound"
    " p li dt dd tr td th option optgroup thead tbody tfoot colgroup caption rb rt rtc rp html head body".split()
)
# Their content is text, not tags; the scan jumps to their end tag.
_RAW_TEXT_END = {
    name: re.compile(rf"</{name}", re.IGNORECASE)
    for name in "script style textarea title xmp iframe noembed noframes plaintext".split()
}


def check_nesting(html: str) -> None:
    """Raises UnreadableFileError when `html` is nested too deeply to parse in reasonable time."""
    # n tags can nest at most n deep: pages with few tags need no scan.
    tags = html.count("<")
    if tags * (tags + 1) // 2 <= MAX_NESTING_COST:
        return
    depth = deepest = cost = 0
    position = 0
    while (match := _TAG.search(html, position)) is not None:
        position = match.end()
        name = match.group(2).lower()
        if name in _RAW_TEXT_END:
            if not match.group(1):
                end = _RAW_TEXT_END[name].search(html, position)
                if end is None:
                    break
                position = end.start() + 2
            continue
        if name in _UNCOUNTED:
            continue
        if match.group(1):
            depth = max(0, depth - 1)
            continue
        depth += 1
        deepest = max(deepest, depth)
        cost += depth
        if cost > MAX_NESTING_COST:
            raise UnreadableFileError(f"HTML nested too deeply to parse ({deepest:,}+ open elements)")
