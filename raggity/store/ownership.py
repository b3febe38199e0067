"""Which folders are raggity's: a marker file written at creation, checked before any write or delete.

`[index] path` may point anywhere, including at a folder that already holds someone else's data (an
`lancedb/` of another tool, a project folder, `/`). raggity writes into, and deletes from, only:
  - a folder it creates (missing or empty), which it marks with `.raggity-index` at once;
  - a folder that holds the marker;
  - an index made before the marker existed, recognised by holding a manifest.json or ingest.lock and
    nothing but raggity's own names: it is adopted by writing the marker.
Anything else is refused with IndexLocationError, before a single file is touched.
"""

from __future__ import annotations

import json
import os

from raggity.core.atomic_file import atomic_write_text
from raggity.core.errors import IndexLocationError, storage_error
from raggity.core.faults import fail_point
from raggity.store.layout import MARKER_NAME, IndexLayout

MARKER_FORMAT = 1
_TEMPORARY_PREFIXES = (".manifest.json.", ".graph.json.", f".{MARKER_NAME}.")


def claim_index_folder(layout: IndexLayout) -> None:
    """Makes sure raggity may write into and delete from `layout.root`, creating or adopting it."""
    root = layout.root
    try:
        fail_point("index:claim")
        layout.refuse_a_file()
        # Links and FIFOs among raggity's own names are refused before the marker is trusted.
        layout.check_entries(deep=True)
        if layout.marker.is_file():
            _check_marker(layout)
            return
        if root.is_dir() and not _adoptable(layout):
            raise IndexLocationError(
                f"{root}: this folder is not empty and is not a raggity index; refusing to write into it",
                "set [index] path to a new or empty folder (raggity only writes where it keeps its index)",
            )
        root.mkdir(parents=True, exist_ok=True)
        atomic_write_text(layout.marker, json.dumps({"raggity_index": MARKER_FORMAT}) + "\n")
    except OSError as exc:
        raise storage_error(exc, root) or IndexLocationError(
            f"{root}: cannot use this folder for the index ({exc.strerror or exc})",
            "set [index] path to a writable folder",
        ) from exc


def _check_marker(layout: IndexLayout) -> None:
    try:
        data = json.loads(layout.marker.read_text(encoding="utf-8"))
        version = int(data["raggity_index"])
    except (ValueError, KeyError, TypeError) as exc:
        raise IndexLocationError(
            f"{layout.marker}: index marker is damaged", f"check that {layout.root} is a raggity index"
        ) from exc
    if version > MARKER_FORMAT:
        raise IndexLocationError(
            f"{layout.root}: index made by a newer raggity (format {version})", "upgrade raggity"
        )


def _adoptable(layout: IndexLayout) -> bool:
    """An empty folder (but for temporary files of a killed raggity write), or an index made before the
    marker: raggity's names only, with its manifest or lock."""
    names = {
        n for n in os.listdir(layout.root) if not (n.startswith(_TEMPORARY_PREFIXES) and n.endswith(".tmp"))
    }
    own = {entry.name for entry in layout.own_entries()}
    return not names or (names <= own and bool({layout.manifest.name, layout.lock.name} & names))
