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
import re
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from raggity.core.errors import IndexBusyError, IndexStateError
from raggity.store import sources_table
from raggity.store.ingest_lock import process_alive
from raggity.store.manifest import Manifest, parse_header, with_records
from raggity.store.object_store import PreconditionFailedError, S3Objects
from raggity.store.object_store_errors import store_failure_text

LEASE = "ingest.lock"
CURRENT = "CURRENT"
MANIFESTS = "manifests"
# A writer renews at least this often (between batches); a lease this old belongs to a dead writer.
LEASE_SECONDS = 600.0
# Lance numbers versions from 1 as an unsigned 64-bit integer; its Python binding takes a signed one.
MAX_VERSION = 2**63 - 1
# The manifest keys publish() writes: the table version, zero-padded, and a random hex id.
_MANIFEST_KEY = re.compile(rf"{MANIFESTS}/([0-9]{{1,20}})-[0-9a-f]{{32}}\.json")
# CURRENT remembers the commits it replaced for this long (and at most HISTORY_ENTRIES of them), so
# that cleanup (store/compact.py) knows which versions a reader may still be reading.
HISTORY_SECONDS = 7 * 86400.0
HISTORY_ENTRIES = 1000


@dataclass(frozen=True)
class Replaced:
    """A commit CURRENT named until `until` (the publisher's clock, seconds since the epoch)."""

    version: int
    manifest: str
    until: float


@dataclass(frozen=True)
class Commit:
    """What CURRENT points at: the table version and the manifest object of one complete ingest.

    `history`: the commits CURRENT named before, newest first; complete for every replacement after
    `history_since` (None: unknown, a CURRENT written before history was kept)."""

    version: int
    manifest: str
    etag: str
    history: tuple[Replaced, ...] = ()
    history_since: float | None = None


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
    return not process_alive(pid)


def current_commit(objects: S3Objects, *, repair: bool = False) -> Commit | None:
    """The index's last complete ingest, or None before the first one.

    Every command reads CURRENT through here, so a damaged pointer (not JSON, not an object, a version
    that is not a Lance version number, a manifest key that is not one a writer makes) is the same
    one-line IndexStateError for all of them, before any number reaches Lance (`-1` and 2**70 ended
    in OverflowError there). `repair` (a rebuild): a damaged pointer is not an error; the commit is
    recovered from the newest complete manifest, with the damaged object's etag, so the rebuild's
    publish replaces it by compare-and-swap (see recover_commit)."""
    found = objects.get(CURRENT)
    if found is None:
        return None
    commit = parse_pointer(found.body, found.etag)
    if commit is not None:
        return commit
    if repair:
        return recover_commit(objects, found.etag)
    raise damaged_pointer()


def damaged_pointer(why: str = "is damaged") -> IndexStateError:
    return IndexStateError(f"the index's CURRENT pointer {why}", "run `rag ingest --rebuild` to repair it")


def parse_pointer(body: bytes, etag: str) -> Commit | None:
    """CURRENT's body as a Commit, or None when it is not one publish() could have written."""
    data = _parse(body)
    version, manifest = data.get("version"), data.get("manifest")
    # bool is an int subclass; a float, a string or a number Lance's u64 cannot hold is damage.
    if type(version) is not int or not 1 <= version <= MAX_VERSION:
        return None
    if not isinstance(manifest, str) or _MANIFEST_KEY.fullmatch(manifest) is None:
        return None
    history, since = _history(data)
    return Commit(version, manifest, etag, history, since)


def _history(data: dict[str, Any]) -> tuple[tuple[Replaced, ...], float | None]:
    """The replaced commits CURRENT lists, and since when the list is complete. Readers never need
    it, so a malformed list is not damage: it reads as unknown (cleanup then deletes nothing)."""
    since, raw = data.get("history_since"), data.get("history")
    if not isinstance(since, int | float) or isinstance(since, bool) or not isinstance(raw, list):
        return (), None
    entries: list[Replaced] = []
    for item in raw:
        if not isinstance(item, list) or len(item) != 3:
            return (), None
        version, manifest, until = item
        if type(version) is not int or not isinstance(manifest, str) or not _is_number(until):
            return (), None
        entries.append(Replaced(version, manifest, float(until)))
    return tuple(entries), float(since)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _pointer(version: int, key: str, previous: Commit | None, now: float) -> bytes:
    """CURRENT's body: the new commit, and the history of replaced commits with `previous` first."""
    history: list[Replaced] = []
    since = now
    if previous is not None:
        if previous.version >= 1:  # a recovered commit of version 0 named nothing readable
            history.append(Replaced(previous.version, previous.manifest, now))
        history += previous.history
        if previous.history_since is not None:
            since = previous.history_since
    kept = [entry for entry in history if entry.until > now - HISTORY_SECONDS][:HISTORY_ENTRIES]
    since = max([since, now - HISTORY_SECONDS, *(e.until for e in history[len(kept) :])])
    return json.dumps(
        {
            "version": version,
            "manifest": key,
            "history_since": since,
            "history": [[e.version, e.manifest, e.until] for e in kept],
        }
    ).encode()


def recover_commit(objects: S3Objects, etag: str) -> Commit:
    """The commit of the newest manifest that a writer completed (its key names its table version and
    its body is a manifest), carrying the damaged CURRENT's `etag`; with no such manifest, a commit of
    version 0 that only carries the etag (a rebuild publishes over it and reads nothing from it)."""
    keys = sorted(
        (
            (int(match.group(1)), key)
            for key in objects.names(f"{MANIFESTS}/")
            if (match := _MANIFEST_KEY.fullmatch(key))
        ),
        reverse=True,
    )
    for version, key in keys:
        found = objects.get(key)
        if found is not None and 1 <= version <= MAX_VERSION and _is_manifest(found.body):
            return Commit(version, key, etag)
    return Commit(0, "", etag)


def _is_manifest(body: bytes) -> bool:
    data = _parse(body)
    # Records inline (format 2) or a version of the sources table named (store/manifest.py).
    return isinstance(data.get("sources"), dict) or isinstance(data.get("sources_table"), dict)


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
    body = _pointer(version, key, previous, time.time())
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
    history, since = _history(json.loads(body))
    return Commit(version, key, etag, history, since)


def _parse(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class CommittedIndex:
    """What a reader of a remote index works from: one commit's table version and manifest (its
    document, and the manifest with its records from the sources table)."""

    commit: Commit
    dataset: Any
    manifest_text: str
    manifest: Manifest


def open_committed(
    objects: S3Objects, table_uri: str, storage_options: dict[str, str], *, where: str = ""
) -> CommittedIndex:
    """Reads CURRENT once, then opens the chunk table at its version and reads its manifest, records
    included; or the "no index yet" error every reading command gives. `where` names the manifest in
    a damaged-manifest error (its key by default)."""
    commit = current_commit(objects)
    if commit is None:
        raise IndexStateError(f"{table_uri}: no index yet", "run `rag ingest PATH` first")
    text = read_manifest_text(objects, commit)
    dataset = open_version(table_uri, commit.version, storage_options)
    manifest = committed_manifest(text, table_uri, storage_options, where or commit.manifest)
    return CommittedIndex(commit, dataset, text, manifest)


def committed_manifest(text: str, table_uri: str, storage_options: dict[str, str], where: str) -> Manifest:
    """The manifest document `text` with its records, from the sources table beside `table_uri`."""
    return with_records(parse_header(text, where), sources_table.beside(table_uri), storage_options, where)


def open_version(table_uri: str, version: int, storage_options: dict[str, str]) -> Any:
    """The chunk table at the `version` CURRENT names; a version the table does not have is a damaged
    pointer (the same line as any other damage). Object-store failures pass through to the caller's
    mapping (raggity.store.object_store_errors)."""
    import lance  # noqa: PLC0415 - lance loads on first use

    try:
        return lance.dataset(table_uri, version=version, storage_options=storage_options)
    except ValueError as exc:
        text = str(exc)
        if "not found" in text.lower() and not store_failure_text(text):
            raise damaged_pointer(f"names table version {version}, which the table does not have") from None
        raise
