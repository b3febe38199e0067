"""What a citation or chunk id points at: the indexed chunks it names, in file order.

A reference is a chunk id (as `rag search --json` prints it, or a parent id), or a citation as raggity
prints it: `PATH:lines 3-9`, `PATH:line 3`, `PATH:page 2`, `PATH:pages 2-3`, `PATH#anchor`, a named
place (`deck.pptx:slide 7`, `costs.xlsx:Costs!A14:D30`, `analysis.ipynb:cell 12`: core/places.py), or a
bare PATH for every chunk of the file. PATH may be absolute, relative to the current folder, or any tail of
an indexed path (`library/copy.html`) that names one file. An index that names files relative to a
root ([index] root: a shared index) is read on each checkout: an absolute path is taken relative to
this config's root, or matched by the recorded name it ends with.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

from raggity.api.local_only import local_layout
from raggity.config.schema import Config
from raggity.core.errors import RaggityError
from raggity.core.places import place_range
from raggity.core.types import Chunk, Location
from raggity.store.layout import IndexLayout
from raggity.store.manifest import load_manifest
from raggity.store.vector_table import VectorTableReader

__all__ = ["UnknownReferenceError", "show", "show_in_config_index"]

_CHUNK_ID = re.compile(r"[0-9a-f]{20}")
_RANGE = re.compile(r"(?P<path>.+):(?P<kind>lines?|pages?) (?P<first>\d+)(?:-(?P<last>\d+))?")


class UnknownReferenceError(RaggityError):
    """The reference names no chunk of the index."""


def show(
    layout: IndexLayout,
    reference: str,
    *,
    printed: Callable[[str], str] | None = None,
    root: Path | None = None,
) -> list[Chunk]:
    """The chunks `reference` points at, in file order; raises UnknownReferenceError when there are none.

    `printed`: how the caller prints a file name. A name with a newline or an escape character is
    printed with visible escapes (`new\\nline.md`), and that is what a user copies back."""
    layout.require()
    manifest = load_manifest(layout.manifest)
    live = manifest.live_ids()
    table = VectorTableReader(layout.table)
    reference = reference.strip()
    if _CHUNK_ID.fullmatch(reference):
        found = [row.chunk for row in table.fetch([reference]).values() if row.chunk.id in live]
        found = found or [c for c in table.fetch_by_parent([reference]) if c.id in live]
        if found:
            return sorted(found, key=lambda chunk: chunk.ordinal)
    for path, wanted in _readings(reference):
        source = _indexed_source(path, list(manifest.sources), root)
        if source is None and printed is not None:
            source = _printed_source(path, list(manifest.sources), printed, root)
        if source is not None:
            found = [c for c in table.chunks_of(source) if c.id in live and wanted(c.location)]
            if found:
                return found
    raise UnknownReferenceError(
        # Quoted, not repr(): the CLI shows a byte of a name that is not UTF-8 as \xe9, repr as \udce9.
        f"nothing in the index matches '{reference}'",
        "give a chunk id from `rag search --json`, or a citation as printed, e.g. notes.md:lines 3-9",
    )


def show_in_config_index(
    config: Config, reference: str, *, printed: Callable[[str], str] | None = None
) -> list[Chunk]:
    """`show` on the index that `config` names (for the CLI, which reaches the store only through here)."""
    return show(local_layout(config, "rag show"), reference, printed=printed, root=config.source_root)


def _readings(reference: str) -> list[tuple[str, Callable[[Location], bool]]]:
    """The ways to read `reference`, surest first: `notes/a#b.md` is a file of that name before it
    is `notes/a` at anchor `b.md`."""
    cited = _parse_citation(reference)
    readings = [(reference, lambda _: True), cited] if "#" in reference and cited[0] != reference else [cited]
    return readings + _place_readings(reference)


def _place_readings(reference: str) -> list[tuple[str, Callable[[Location], bool]]]:
    """`PATH:PLACE` split at each colon (a path or a place may hold one: `Costs!A1:D9`)."""
    return [
        (reference[:index], _place_test(reference[index + 1 :]))
        for index, char in enumerate(reference)
        if char == ":" and 0 < index < len(reference) - 1
    ]


def _place_test(place: str) -> Callable[[Location], bool]:
    return lambda loc: _in_place(loc, place)


def _in_place(loc: Location, place: str) -> bool:
    """Whether a chunk of a document with named places (slides, rows, cells) overlaps `place`."""
    if loc.page_start is None or not loc.anchor:
        return False
    cited = place_range(loc.anchor, place)
    return cited is not None and loc.page_start <= cited[1] and (loc.page_end or loc.page_start) >= cited[0]


def _parse_citation(reference: str) -> tuple[str, Callable[[Location], bool]]:
    """The path a citation names, and a test for the locations it covers."""
    match = _RANGE.fullmatch(reference)
    if match is not None:
        first = int(match["first"])
        last = int(match["last"] or first)
        if match["kind"].startswith("line"):
            return match[
                "path"
            ], lambda loc: loc.has_lines and loc.line_start <= last and loc.line_end >= first
        return (
            match["path"],
            lambda loc: (
                loc.page_start is not None
                and loc.page_start <= last
                and (loc.page_end or loc.page_start) >= first
            ),
        )
    if "#" in reference:
        path, fragment = reference.rsplit("#", 1)
        anchor = unquote(fragment)
        return path, lambda loc: loc.anchor == anchor
    return reference, lambda _: True


def _printed_source(
    path: str, sources: list[str], printed: Callable[[str], str], root: Path | None
) -> str | None:
    """The indexed source whose printed name `path` names, as _indexed_source reads a name. Two
    sources printed alike (a newline, and a backslash and an n) name neither."""
    forms: dict[str, list[str]] = {}
    for source in sources:
        forms.setdefault(printed(source), []).append(source)
    unique = {form: names[0] for form, names in forms.items() if len(names) == 1}
    found = _indexed_source(path, list(unique), root)
    return unique[found] if found is not None else None


def _indexed_source(path: str, sources: list[str], root: Path | None = None) -> str | None:
    """The indexed source `path` names: exactly, resolved from here (and taken relative to `root`),
    as the tail of one indexed path, or as a path on this checkout that ends with one relative name."""
    if path in sources:
        return path
    resolved = Path(path).expanduser().resolve()
    if str(resolved) in sources:
        return str(resolved)
    if (
        root is not None
        and resolved.is_relative_to(root)
        and resolved.relative_to(root).as_posix() in sources
    ):
        return resolved.relative_to(root).as_posix()
    tail = "/" + path.lstrip("/")
    matches = [source for source in sources if source.endswith(tail)]
    if len(matches) == 1:
        return matches[0]
    ends = [s for s in sources if not s.startswith("/") and str(resolved).endswith("/" + s)]
    return ends[0] if len(ends) == 1 else None
