"""The answer and query-transform cache of one index: size and clearing."""

from __future__ import annotations

from raggity.config.schema import Config
from raggity.store.cache_store import CacheStats, CacheStore
from raggity.store.layout import IndexLayout
from raggity.store.ownership import claim_index_folder


def _store(config: Config) -> CacheStore:
    layout = IndexLayout(config.index_dir)
    layout.refuse_a_file()
    return CacheStore(layout.cache)


def cache_stats(config: Config) -> CacheStats:
    return _store(config).stats()


def clear_cache(config: Config) -> int:
    """Deletes every cached entry; returns how many. Refuses in a folder raggity did not create."""
    layout = IndexLayout(config.index_dir)
    if not layout.cache.is_dir() and not layout.cache.is_symlink():
        return 0
    claim_index_folder(layout)  # refuses a cache folder that is a link, or holds one
    return _store(config).clear()
