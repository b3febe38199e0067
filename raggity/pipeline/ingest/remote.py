"""A full ingest through the Ray stages into an index on object storage, committed once.

Groundwork for `rag ingest --engine ray` against an s3:// index: it takes the writer lease, brings the
table back to the last commit if a writer died after it, writes all rows with lance-ray (one Lance
version), builds the full-text index, writes the manifest and publishes CURRENT. What it does not do
yet is the incremental diff (the driver's added/changed/removed, and deleting the rows of changed and
removed files): this is the `--rebuild` path.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from raggity.pipeline.ingest.ray_engine import RayIngestPlan, new_tally, tally_report, write_chunks
from raggity.store.lance_fts import create_fts_index
from raggity.store.manifest import Fingerprint, Manifest, SourceEntry
from raggity.store.object_store import S3Objects
from raggity.store.remote_commit import Commit, WriterLease, current_commit, publish
from raggity.store.uri import IndexLocation

TABLE_PATH = ("lancedb", "chunks.lance")


@dataclass(frozen=True)
class RemoteIngestReport:
    commit: Commit
    chunks: int
    tokens: int
    skipped: tuple[tuple[str, str], ...]


def rebuild_remote(
    plan: RayIngestPlan,
    location: IndexLocation,
    *,
    stamps: Mapping[str, tuple[int, int]],
    fingerprint: Fingerprint,
    lease_seconds: float | None = None,
) -> RemoteIngestReport:
    """Indexes `plan.paths` afresh into the remote index. `stamps`: each path's (size, mtime_ns) as
    discovery saw them, recorded in the manifest next to the hash the workers computed."""
    import lance  # noqa: PLC0415 - lance loads on first use

    objects = S3Objects(location)
    options = dict(location.storage_options)
    table_uri = location.child(*TABLE_PATH)
    lease = WriterLease(objects) if lease_seconds is None else WriterLease(objects, seconds=lease_seconds)
    with lease:
        previous = current_commit(objects)
        tally = new_tally()
        # "overwrite" is one new version with only these rows (also over a first ingest that died before
        # publishing): readers keep the previous commit's version until publish.
        write_chunks(plan, tally, table_uri, options, mode="overwrite")
        lease.renew()
        create_fts_index(lance.dataset(table_uri, storage_options=options))
        version = lance.dataset(table_uri, storage_options=options).version
        sources, skipped, chunks, tokens = tally_report(tally)
        manifest = Manifest(
            fingerprint=fingerprint,
            last_ingest=time.time(),
            sources={s.source: SourceEntry(s.sha256, *stamps[s.source], s.chunk_ids) for s in sources},
        )
        commit = publish(objects, lease, version=version, manifest=manifest.to_json(), previous=previous)
    return RemoteIngestReport(commit, chunks, tokens, tuple(skipped))
