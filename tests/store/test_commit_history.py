"""CURRENT's history of the commits it replaced: what cleanup (store/compact.py) reads to know which
versions a reader may still be reading. The objects are an in-memory double of a store's conditional
writes, passed in through StoreObjects' transport seam."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from raggity.config.location import IndexLocation
from raggity.store.compact import _kept_commits
from raggity.store.object_commit import CURRENT, HISTORY_ENTRIES, WriterLease, current_commit, publish
from raggity.store.object_store import PreconditionFailedError, StoredObject, StoreObjects


class MemoryObjects:
    """create-if-absent and compare-and-swap over a dict; etags count writes."""

    def __init__(self) -> None:
        self.objects: dict[str, tuple[bytes, str]] = {}
        self._writes = 0

    def _put(self, name: str, body: bytes) -> str:
        self._writes += 1
        self.objects[name] = (body, f"etag-{self._writes}")
        return f"etag-{self._writes}"

    def create(self, name: str, body: bytes) -> str:
        if name in self.objects:
            raise PreconditionFailedError(name)
        return self._put(name, body)

    def replace(self, name: str, body: bytes, etag: str) -> str:
        if name not in self.objects or self.objects[name][1] != etag:
            raise PreconditionFailedError(name)
        return self._put(name, body)

    def get(self, name: str) -> StoredObject | None:
        found = self.objects.get(name)
        return None if found is None else StoredObject(*found)

    def names(self, prefix: str) -> list[str]:
        return sorted(name for name in self.objects if name.startswith(prefix))

    def delete(self, name: str, etag: str) -> None:
        if name in self.objects and self.objects[name][1] != etag:
            raise PreconditionFailedError(name)
        self.objects.pop(name, None)


def _objects() -> tuple[StoreObjects, MemoryObjects]:
    memory = MemoryObjects()
    return StoreObjects(IndexLocation("s3://bucket/index", {}), transport=memory), memory


def test_current_lists_the_commits_it_replaced_newest_first() -> None:
    objects, _ = _objects()
    with WriterLease(objects) as lease:
        first = publish(objects, lease, version=3, manifest='{"sources": {}}', previous=None)
        second = publish(objects, lease, version=7, manifest='{"sources": {}}', previous=first)
        publish(objects, lease, version=9, manifest='{"sources": {}}', previous=second)
    commit = current_commit(objects)
    assert commit is not None
    assert [(e.version, e.manifest) for e in commit.history] == [(7, second.manifest), (3, first.manifest)]
    assert commit.history[0].until >= commit.history[1].until
    # Complete from the first publish on: nothing was replaced before it.
    assert commit.history_since is not None
    assert commit.history_since <= commit.history[1].until


def test_a_damaged_history_is_not_a_damaged_pointer_but_an_unknown_one() -> None:
    objects, memory = _objects()
    with WriterLease(objects) as lease:
        publish(objects, lease, version=3, manifest='{"sources": {}}', previous=None)
    body = json.loads(memory.objects[CURRENT][0])
    for history in ([[3, "k"]], "garbage", [["3", "k", 1.0]], [[3, "k", True]]):
        memory.objects[CURRENT] = (json.dumps({**body, "history": history}).encode(), "etag-x")
        commit = current_commit(objects)
        assert commit is not None
        assert commit.version == 3
        assert commit.history_since is None


def test_cleanup_keeps_what_current_named_within_the_window_only() -> None:
    objects, _ = _objects()
    with WriterLease(objects) as lease:
        first = publish(objects, lease, version=3, manifest='{"sources": {}}', previous=None)
        publish(objects, lease, version=7, manifest='{"sources": {}}', previous=first)
    commit = current_commit(objects)
    assert commit is not None
    made = {3: datetime.now(), 7: datetime.now()}
    kept, held_back = _kept_commits(commit, timedelta(hours=1), made)
    # The history began moments ago: an older replacement it cannot list may still be read.
    assert held_back
    assert kept == {(7, commit.manifest)}
    old = type(commit)(commit.version, commit.manifest, commit.etag, commit.history, 0.0)
    kept, held_back = _kept_commits(old, timedelta(hours=1), made)
    assert (kept, held_back) == ({(7, commit.manifest), (3, first.manifest)}, "")
    kept, held_back = _kept_commits(old, timedelta(0), made)
    assert (kept, held_back) == ({(7, commit.manifest)}, "")


def test_a_pointer_from_before_the_history_is_trusted_once_its_version_is_old() -> None:
    objects, memory = _objects()
    memory.objects[CURRENT] = (
        json.dumps({"version": 7, "manifest": "manifests/000000000007-" + "0" * 32 + ".json"}).encode(),
        "e",
    )
    commit = current_commit(objects)
    assert commit is not None
    assert commit.history_since is None
    _, held_back = _kept_commits(commit, timedelta(minutes=10), {7: datetime.now()})
    assert held_back
    kept, held_back = _kept_commits(commit, timedelta(minutes=10), {7: datetime.now() - timedelta(hours=1)})
    assert (kept, held_back) == ({(7, commit.manifest)}, "")


def test_history_is_capped_and_says_from_when_it_is_complete() -> None:
    objects, _ = _objects()
    with WriterLease(objects) as lease:
        previous = publish(objects, lease, version=1, manifest='{"sources": {}}', previous=None)
        for version in range(2, HISTORY_ENTRIES + 2):
            previous = publish(objects, lease, version=version, manifest='{"sources": {}}', previous=previous)
        full = current_commit(objects)
        publish(objects, lease, version=HISTORY_ENTRIES + 2, manifest='{"sources": {}}', previous=previous)
    commit = current_commit(objects)
    assert full is not None
    assert commit is not None
    assert len(full.history) == len(commit.history) == HISTORY_ENTRIES
    assert full.history[-1].version == 1
    assert commit.history[-1].version == 2  # version 1's entry was dropped...
    # ...so the list is complete only from when version 1 was replaced on.
    assert full.history_since is not None
    assert commit.history_since is not None
    assert full.history_since < commit.history_since == full.history[-1].until <= commit.history[-1].until
