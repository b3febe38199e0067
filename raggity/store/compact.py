"""Cleanup: deletes the versions of an index that no reader can still be reading (`rag compact`, and
the automatic cleanup after an ingest, raggity.api.compact).

A reader opens one version and reads it for as long as it works: a local reader the version the
manifest names (or, in the middle of an ingest, the table's latest) at its query, a reader of an
object store the version CURRENT named when it read CURRENT (a long `rag ask`, an `rag mcp` server
between refreshes, a teammate's search on another machine). So a version may go once it was
replaced more than `keep` ago; the one a reader would open now never goes.

- Local folder: the LanceDB table's small fragments are merged, then every version replaced (by the
  next one) more than `keep` ago is deleted, with the files only they used; so are the sources
  table's, except the version the manifest names; Tantivy's files that its last commit no longer
  lists are deleted (an open Tantivy reader keeps its segments mapped).
- Object store: CURRENT lists the commits it replaced and when (object_commit.Replaced); the versions
  older than CURRENT's that it named within `keep`, and CURRENT's own, stay; every other older version
  goes (intermediate versions of past ingests, which no reader ever opened), and so do the manifest
  objects of no kept commit; likewise the sources table's versions that no kept manifest names.
  Versions after CURRENT's (a writer that died) are left to the next writer, which restores over
  them. A CURRENT written before the history was kept is trusted only
  once its version is `keep` plus LEGACY_MARGIN old.

Both run under the index's writer lock (the flock, or the lease), so no ingest writes meanwhile.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from raggity.config.schema import IndexConfig
from raggity.core.errors import IndexStateError
from raggity.core.faults import checkpoint
from raggity.store.bm25_index import Bm25Writer, built_with
from raggity.store.ingest_lock import IngestLock
from raggity.store.layout import IndexLayout
from raggity.store.manifest import Header, load_header, name_chunk_version, parse_header
from raggity.store.object_commit import MANIFESTS, Commit, WriterLease, current_commit
from raggity.store.object_store import S3Objects
from raggity.store.sources_table import beside, open_table
from raggity.store.uri import IndexLocation
from raggity.store.vector_table import committed

# A CURRENT without history: its version was created moments before it was published (the last step
# of an ingest), so once it is this much older than `keep`, every older version was replaced before.
LEGACY_MARGIN = timedelta(minutes=5)


def cleanup_after_ingest(config: IndexConfig) -> timedelta | None:
    """How long an ingest's own cleanup keeps replaced versions ([index] keep_versions_seconds), or
    None when [index] compact_after_ingest is off."""
    return timedelta(seconds=config.keep_versions_seconds) if config.compact_after_ingest else None


@dataclass(frozen=True)
class CompactReport:
    """What one cleanup did. Versions are the chunk table's, the ones a reader opens (the sources
    table's go with them and count in the bytes)."""

    versions_removed: int
    versions_kept: int
    bytes_removed: int
    manifests_removed: int
    # Why nothing older could go yet (a CURRENT whose history is younger than `keep`), or "".
    held_back: str = ""


def compact_local(layout: IndexLayout, keep: timedelta, *, wait_seconds: float = 0.0) -> CompactReport:
    """Merges fragments and deletes what no reader of the folder can still be reading."""
    layout.require()
    with IngestLock(layout.lock, wait_seconds=wait_seconds):
        layout.check_entries(deep=True)  # nothing is deleted through a link
        header = load_header(layout.manifest)
        removed, kept, freed = _local_table(layout, keep, header)
        freed += remove_replaced(layout.sources, keep, named=header.sources_version)[2]
        if (layout.tantivy / "meta.json").is_file():
            writer = Bm25Writer(layout.tantivy, built_with(layout.tantivy))
            writer.close()  # garbage-collects the files no committed segment lists
    return CompactReport(removed, kept, freed, 0)


def _local_table(layout: IndexLayout, keep: timedelta, header: Header) -> tuple[int, int, int]:
    """Merges the chunk table's fragments, then removes replaced versions. The version the manifest
    names stays, as the sources table's does: readers open it (a dead writer's versions may follow
    it). When it was the latest, the merged version holds the same rows, and the manifest names that
    one instead, so that readers get the merged files."""
    table = layout.table
    if not committed(table):
        return 0, 0, 0
    import lance  # noqa: PLC0415 - lance loads on first use

    dataset = lance.dataset(str(table))
    named, latest = header.chunk_version, dataset.version
    dataset.optimize.compact_files()  # moves `dataset` to the merged version, if it made one
    if named == latest and dataset.version != latest and dataset.count_rows() == header.chunks:
        name_chunk_version(layout.manifest, int(dataset.version))
        named = int(dataset.version)
    return remove_replaced(table, keep, named=named)


def remove_replaced(table: Path, keep: timedelta, *, named: int | None = None) -> tuple[int, int, int]:
    """Deletes the versions of the local table `table` replaced more than `keep` ago, never `named`
    (the sources table's version the manifest names, which a dead writer's versions may follow).
    Returns (versions removed, kept, bytes freed)."""
    if not committed(table):
        return 0, 0, 0
    import lance  # noqa: PLC0415 - lance loads on first use

    dataset = lance.dataset(str(table))
    versions: list[tuple[int, datetime]] = sorted((int(v["version"]), _made(v)) for v in dataset.versions())
    now = datetime.now(versions[-1][1].tzinfo)  # Lance's times are naive local times
    # A local reader opens the latest version: version i was replaced when version i+1 appeared.
    doomed = [
        old for (old, _), (_, made) in itertools.pairwise(versions) if now - made >= keep and old != named
    ]
    return _delete_versions(dataset, doomed, len(versions))


def _made(version: Any) -> datetime:
    made = version["timestamp"]
    if not isinstance(made, datetime):
        raise TypeError(f"Lance version {version.get('version')} has no timestamp")
    return made


def compact_remote(
    location: IndexLocation, table_uri: str, lease: WriterLease, keep: timedelta
) -> CompactReport:
    """Deletes old versions and manifests of the index at `location`; the caller holds `lease`."""
    objects = S3Objects(location)
    commit = current_commit(objects)
    if commit is None:
        raise IndexStateError(f"{location.uri}: no index yet", "run `rag ingest PATH` first")
    import lance  # noqa: PLC0415 - lance loads on first use

    dataset = lance.dataset(table_uri, storage_options=dict(location.storage_options))
    versions = {int(v["version"]): _made(v) for v in dataset.versions()}
    kept_commits, held_back = _kept_commits(commit, keep, versions)
    if held_back:
        return CompactReport(0, len(versions), 0, 0, held_back)
    # Manifests first: a kill before the versions go leaves versions no manifest names (the next
    # cleanup takes them), never a manifest whose version is gone (`rag ingest --rebuild` recovers a
    # damaged CURRENT from the newest manifest).
    manifests = {key for _, key in kept_commits}
    gone = 0
    for name in objects.names(f"{MANIFESTS}/"):
        if name not in manifests:
            found = objects.get(name)
            if found is not None:
                objects.delete(name, found.etag)
                gone += 1
    checkpoint("compact:manifests")
    lease.renew()
    protected = {version for version, _ in kept_commits}
    doomed = [v for v in versions if v < commit.version and v not in protected]
    removed, kept, freed = _delete_versions(dataset, doomed, len(versions))
    freed += _remote_sources(objects, table_uri, dict(location.storage_options), manifests)[2]
    return CompactReport(removed, kept, freed, gone)


def _remote_sources(
    objects: S3Objects, table_uri: str, options: dict[str, str], manifests: set[str]
) -> tuple[int, int, int]:
    """Deletes the sources table's versions older than the newest one a kept manifest names, except
    those the kept manifests name (`manifests`: their keys, CURRENT's first among them)."""
    named: set[int] = set()
    for key in manifests:
        found = objects.get(key)
        version = None if found is None else _sources_version(found.body, key)
        if version is not None:
            named.add(version)
    dataset = open_table(beside(table_uri), options)
    if dataset is None or not named:
        return 0, 0, 0
    versions = [int(v["version"]) for v in dataset.versions()]
    doomed = [v for v in versions if v < max(named) and v not in named]
    return _delete_versions(dataset, doomed, len(versions))


def _sources_version(body: bytes, key: str) -> int | None:
    try:
        return parse_header(body.decode("utf-8"), key).sources_version
    except (UnicodeDecodeError, IndexStateError):
        return None


def _kept_commits(
    commit: Commit, keep: timedelta, versions: dict[int, datetime]
) -> tuple[set[tuple[int, str]], str]:
    """The (version, manifest) of every commit a reader may still be reading, or why none can be
    told apart yet (then nothing older than CURRENT's version may go)."""
    now = datetime.now().timestamp()
    cutoff = now - keep.total_seconds()
    current = {(commit.version, commit.manifest)}
    if commit.history_since is None:
        made = versions.get(commit.version)
        if made is None or datetime.now(made.tzinfo) - made < keep + LEGACY_MARGIN:
            return current, "CURRENT was written before it kept a history, and its version is recent"
        return current, ""
    if commit.history_since > cutoff:
        return current, "CURRENT's history of replaced versions is younger than the window"
    return current | {(e.version, e.manifest) for e in commit.history if e.until > cutoff}, ""


def _delete_versions(dataset: Any, doomed: list[int], total: int) -> tuple[int, int, int]:
    """Deletes the versions `doomed` (never the latest, which Lance keeps) and the files only they
    use; the caller holds the writer lock, so files of no version are a dead writer's and go too."""
    if not doomed:
        return 0, total, 0
    # `versions` alone: exactly these go, whatever their age (no `older_than` default applies).
    stats = dataset.cleanup_old_versions(versions=sorted(doomed), delete_unverified=True)
    removed = int(stats.old_versions)
    return removed, total - removed, int(stats.bytes_removed)
