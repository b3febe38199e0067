"""`rag compact`: deletes the index's versions that no reader can
still be reading (replaced more than [index] keep_versions_seconds ago), on either store (design:
raggity/store/compact.py)."""

from __future__ import annotations

from datetime import timedelta

from raggity.config.schema import Config
from raggity.pipeline.ingest.indexer import index_store
from raggity.store.compact import CompactReport
from raggity.store.index_seam import Compacts

__all__ = ["CompactReport", "compact_index"]


def compact_index(
    config: Config, *, keep_seconds: float | None = None, wait_seconds: float = 0.0
) -> CompactReport:
    """Cleans the config's index up; `keep_seconds` overrides [index] keep_versions_seconds. Waits up
    to `wait_seconds` for a running ingest (IndexBusyError after that)."""
    store = index_store(config)
    assert isinstance(store, Compacts)  # both stores behind the seam do
    keep = timedelta(seconds=config.index.keep_versions_seconds if keep_seconds is None else keep_seconds)
    try:
        return store.compact(keep, wait_seconds=wait_seconds)
    except (OSError, RuntimeError, ValueError) as exc:  # full disk, unreachable store: one line
        mapped = store.failure(exc)
        if mapped is None:
            raise
        raise mapped from None
