"""One health check of a local index folder: what every command that reads the index refuses, and
what `rag doctor` reports, in the same words.

Quick enough for every `rag search` (a few stats and the manifest it reads anyway): the folder's own
entries are what raggity made (no link, no FIFO: IndexLayout.check_entries), there is a manifest, and
when the manifest lists chunks, the stores that hold them exist: a committed chunk table under
lancedb/ and a Tantivy index under tantivy/. An emptied `lancedb/` under a manifest that lists
chunks answered "no results" with exit 0; a linked `lancedb/` was refused by every command but
passed by doctor. `rag doctor` adds the slow check (every listed chunk id in both stores).
"""

from __future__ import annotations

from raggity.core.errors import IndexLocationError, IndexStateError
from raggity.store.layout import IndexLayout
from raggity.store.manifest import Manifest, load_header, local_records
from raggity.store.vector_table import committed

Problem = IndexStateError | IndexLocationError
REBUILD = "run `rag ingest --rebuild` to rebuild the index from its files"


def check_index(layout: IndexLayout, *, records: bool = True) -> tuple[Manifest | None, Problem | None]:
    """The committed manifest of the index at `layout` and None, or None and the one error to show
    (IndexLocationError for an index path that is a file, IndexStateError for the rest). `records`
    False: the manifest's header only (its fingerprint and flags, no per-file records), for a caller
    that reads the records itself (a search, through its snapshot)."""
    try:
        layout.refuse_a_file()
        layout.check_entries()
    except (IndexLocationError, IndexStateError) as exc:
        return None, exc
    if not layout.exists():
        return None, IndexStateError(f"{layout.root}: no index yet", "run `rag ingest PATH` first")
    try:
        header = load_header(layout.manifest)  # its counts: no records read yet
        if header.chunks:
            if not committed(layout.table):
                return None, _damaged(layout, "its chunk table (lancedb/) is missing or empty")
            if not (layout.tantivy / "meta.json").is_file():
                return None, _damaged(layout, "its keyword index (tantivy/) is missing or empty")
        return (local_records(header, layout.manifest) if records else header.manifest), None
    except IndexStateError as exc:
        return None, exc


def require_healthy(layout: IndexLayout, *, records: bool = True) -> Manifest:
    """The committed manifest (`records`: see check_index), or the health check's one error raised."""
    manifest, problem = check_index(layout, records=records)
    if problem is not None:
        raise problem
    assert manifest is not None  # check_index gives one or the other
    return manifest


def _damaged(layout: IndexLayout, what: str) -> IndexStateError:
    return IndexStateError(f"{layout.root}: the manifest lists chunks, but {what}", REBUILD)
