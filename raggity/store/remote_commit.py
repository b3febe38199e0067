"""The writer lease and the commit point of an index on object storage (design: docs/scaling.md).

- Lease (`ingest.lock`): created with If-None-Match, so exactly one writer holds it; a second writer gets
  IndexBusyError. An object store cannot free a lock when its holder dies (a local flock can), so the
  lease carries an expiry that the writer pushes forward (`renew`, a compare-and-swap on its own etag)
  while it works; a lease past its expiry is taken over by compare-and-swap, and a writer whose lease
  was taken over fails at its next renew or at publish instead of committing over the new writer.
- Commit point (`CURRENT`): {"version": V, "manifest": KEY}. The writer adds rows to the Lance table
  (each add is a Lance version no reader opens), writes the manifest as a new immutable object, then
  swaps CURRENT with If-Match on the etag it started from. Readers read CURRENT once and open the table
  at version V and that manifest: both immutable, so a reader sees one complete ingest, old or new,
  however long it reads and whatever a writer does meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from raggity.core.errors import IndexBusyError, IndexStateError
from raggity.store.object_store import PreconditionFailedError, S3Objects

LEASE = "ingest.lock"
CURRENT = "CURRENT"
MANIFESTS = "manifests"
# A writer renews at least this often (between batches); a lease this old belongs to a dead writer.
LEASE_SECONDS = 600.0


@dataclass(frozen=True)
class Commit:
    """What CURRENT points at: the table version and the manifest object of one complete ingest."""

    version: int
    manifest: str
    etag: str


class WriterLease:
    """Held by the one writer of a remote index, as IngestLock is for a local one."""

    def __init__(
        self,
        objects: S3Objects,
        *,
        seconds: float = LEASE_SECONDS,
        now: Callable[[], float] = time.time,
        holder: str | None = None,
    ) -> None:
        """`now` is the clock the expiry is read against (tests move it instead of sleeping)."""
        self._objects = objects
        self._seconds = seconds
        self._now = now
        self._holder = holder or f"{socket.gethostname()} pid {os.getpid()}"
        self._etag: str | None = None

    def __enter__(self) -> WriterLease:
        try:
            self._etag = self._objects.create(LEASE, self._body())
            return self
        except PreconditionFailedError:
            pass
        found = self._objects.get(LEASE)
        if found is None:  # released between our create and our read: try once more
            return self.__enter__()
        lease = _parse(found.body)
        if float(lease.get("expires", 0)) > self._now() and not _died_here(lease):
            raise IndexBusyError(
                f"another ingest is writing this index ({lease.get('holder', 'unknown writer')})",
                "wait for it to finish; a writer that died frees the index when its lease expires",
            )
        try:  # the holder died: take its lease over, unless another writer just did
            self._etag = self._objects.replace(LEASE, self._body(), found.etag)
        except PreconditionFailedError:
            raise IndexBusyError(
                "another ingest took over this index's expired lease", "wait for it to finish"
            ) from None
        return self

    def renew(self) -> None:
        """Pushes the expiry forward; IndexBusyError if another writer took the lease over."""
        if self._etag is None:
            raise RuntimeError("renew() outside the lease")
        try:
            self._etag = self._objects.replace(LEASE, self._body(), self._etag)
        except PreconditionFailedError:
            self._etag = None
            raise IndexBusyError(
                "this ingest's lease expired and another writer took the index over",
                "run the ingest again once the other one has finished",
            ) from None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._etag is None:
            return
        etag, self._etag = self._etag, None
        try:
            self._objects.delete(LEASE, etag)
        except PreconditionFailedError:
            # Either taken over after expiring (the lease is the new writer's now), or renewed by a
            # write whose reply never reached us: Ctrl-C between a renewal's PUT and its answer left
            # the old etag here and the lease on the store. Ours is deleted by its current etag.
            found = self._objects.get(LEASE)
            if found is not None and _parse(found.body).get("holder") == self._holder:
                with contextlib.suppress(PreconditionFailedError):
                    self._objects.delete(LEASE, found.etag)

    def _body(self) -> bytes:
        return json.dumps(
            {
                "holder": self._holder,
                "expires": self._now() + self._seconds,
                "host": socket.gethostname(),
                "pid": os.getpid(),
            }
        ).encode()


def _died_here(lease: dict[str, Any]) -> bool:
    """Whether the lease's writer ran on this machine and its process is gone (killed, crashed): its
    lease is then taken over at once instead of after its expiry, as a local flock would be freed."""
    pid = lease.get("pid")
    if lease.get("host") != socket.gethostname() or not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return False  # this process holds it (another lease object): it is alive
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # exists, owned by someone else
    return False


def current_commit(objects: S3Objects) -> Commit | None:
    """The index's last complete ingest, or None before the first one."""
    found = objects.get(CURRENT)
    if found is None:
        return None
    data = _parse(found.body)
    try:
        return Commit(int(data["version"]), str(data["manifest"]), found.etag)
    except (KeyError, TypeError, ValueError):
        raise IndexStateError(
            "the index's CURRENT pointer is damaged", "run `rag ingest --rebuild` to rebuild the index"
        ) from None


def read_manifest_text(objects: S3Objects, commit: Commit) -> str:
    found = objects.get(commit.manifest)
    if found is None:
        raise IndexStateError(
            f"the manifest {commit.manifest} of the current index is missing",
            "run `rag ingest --rebuild` to rebuild the index",
        )
    return found.body.decode("utf-8")


def publish(
    objects: S3Objects, lease: WriterLease, *, version: int, manifest: str, previous: Commit | None
) -> Commit:
    """Makes table `version` with `manifest` the index readers open: the single commit point.

    The manifest goes to a new key first (never overwritten, so a reader holding the old pointer keeps
    reading the old manifest); then CURRENT moves by compare-and-swap from `previous`. If anything else
    moved it, or the lease was lost, nothing is published and the caller gets IndexBusyError."""
    lease.renew()
    key = f"{MANIFESTS}/{version:012d}-{uuid.uuid4().hex}.json"
    objects.create(key, manifest.encode("utf-8"))
    body = json.dumps({"version": version, "manifest": key}).encode()
    try:
        etag = (
            objects.create(CURRENT, body)
            if previous is None
            else objects.replace(CURRENT, body, previous.etag)
        )
    except PreconditionFailedError:
        raise IndexBusyError(
            "another writer committed to this index during this ingest", "run the ingest again"
        ) from None
    return Commit(version, key, etag)


def _parse(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class CommittedIndex:
    """What a reader of a remote index works from: one commit's table version and manifest."""

    commit: Commit
    dataset: Any
    manifest_text: str


def open_committed(objects: S3Objects, table_uri: str, storage_options: dict[str, str]) -> CommittedIndex:
    """Reads CURRENT once, then opens the chunk table at its version and reads its manifest; or the
    "no index yet" error every reading command gives."""
    import lance  # noqa: PLC0415 - lance loads on first use

    commit = current_commit(objects)
    if commit is None:
        raise IndexStateError(f"{table_uri}: no index yet", "run `rag ingest PATH` first")
    dataset = lance.dataset(table_uri, version=commit.version, storage_options=storage_options)
    return CommittedIndex(commit, dataset, read_manifest_text(objects, commit))
