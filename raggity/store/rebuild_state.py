"""Whether the index holds only part of its files right now: a full rebuild running, or interrupted."""

from __future__ import annotations

from raggity.core.errors import IndexStateError
from raggity.store.ingest_lock import running_writer
from raggity.store.layout import IndexLayout
from raggity.store.manifest import load_header


def rebuild_notice(layout: IndexLayout) -> str:
    """Why the index holds only part of the files right now ("" when it does not): a full rebuild is
    running, or one was interrupted."""
    try:
        header = load_header(layout.manifest)  # the document alone: no records read
    except IndexStateError:
        return ""
    if not header.manifest.rebuilding:
        return ""
    done = header.files
    pid = running_writer(layout.lock)
    if pid is not None:
        return (
            f"the index is being rebuilt (pid {pid}, {done} files so far): "
            "results come only from those files until it finishes"
        )
    return (
        f"a rebuild of the index stopped after {done} files: results come only from those; "
        "run `rag ingest` to finish it"
    )
