"""The markup an HTML page was rendered from, found beside the page or in Sphinx's copy of it.

Reading both indexes every page twice, and the two copies take two of the top results; discovery
reads the page (the one with includes expanded) and leaves the source out, unless the page itself
is not read after all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from raggity.documents.readers.kinds import kind_of

PAGE_SOURCE = (
    "the source of an HTML page that is read instead (set [ingest] include_generated = true to read both)"
)
# The markup a page is rendered from: AsciiDoc and plain text (.txt), Markdown, reStructuredText.
_PAGE_SOURCE_KINDS = ("text", "markdown", "rst")


@dataclass(frozen=True)
class PageSource:
    """A page's source (git-stash.txt) found beside its page (git-stash.html), or Sphinx's copy of
    it (_sources/intro.rst.txt for intro.html)."""

    path: str
    real: str
    st: os.stat_result | None
    via_link: bool
    page: str


def page_beside(path: str) -> str | None:
    """The HTML page beside `path` when `path` is the markup it was rendered from ("git-stash.txt"
    next to "git-stash.html", as git's documentation ships): read both, every page is indexed
    twice and takes two of the top results. The HTML is read, the one with includes expanded.
    Whether the page is read after all (not ignored, excluded, generated or too large) is settled
    at the end of discovery."""
    if kind_of(Path(path)) not in _PAGE_SOURCE_KINDS:
        return None
    stem = os.path.splitext(path)[0]
    for page_path in (f"{stem}.html", f"{stem}.htm"):
        if os.path.isfile(page_path):
            return page_path
    return None


def page_copied_from(real: str) -> str | None:
    """The HTML page whose source Sphinx copied to `real` (html/_sources/guide/intro.rst.txt for
    html/guide/intro.html). The _sources folder itself is left out as generated, but Debian's
    packages link it as rst/ beside html/, and through the link every page was read twice."""
    build, marker, copied = real.rpartition(f"{os.sep}_sources{os.sep}")
    if not marker:
        return None
    # Sphinx names the copy <page><source suffix>.txt ("intro.rst.txt", whatever the project's
    # source suffix); before 1.5, <page>.txt. The name without ".txt" is tried first, so that
    # "v1.2.txt" is the copy of "v1.2.html".
    page = copied.removesuffix(".txt")
    for name in (page, os.path.splitext(page)[0]):
        for candidate in (f"{name}.html", os.path.join(name, "index.html")):
            page_path = os.path.join(build, candidate)
            if os.path.isfile(page_path):
                return page_path
    return None
