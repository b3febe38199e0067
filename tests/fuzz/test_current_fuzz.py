"""Damaged `CURRENT` and manifest values of an index on object storage, as a hand edit, a truncated
upload or another tool leaves them: every reader gets a Commit that publish() could have written or
the one IndexStateError, never an exception of another kind (an OverflowError from a version Lance
cannot hold reached `internal error`, exit 70), and a manifest is a Manifest or IndexStateError.

No object store here: `current_commit` reads CURRENT through a dictionary-backed double of
S3Objects' `get` and `names`, passed in as its `objects` argument."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raggity.core.errors import IndexStateError
from raggity.store.manifest import Manifest, parse_manifest
from raggity.store.object_commit import CURRENT, MAX_VERSION, current_commit
from raggity.store.object_store import StoredObject
from tests.fuzz.conftest import FUZZ

KEY = re.compile(r"manifests/[0-9]{1,20}-[0-9a-f]{32}\.json")
VALID_KEY = "manifests/000000000007-" + "c" * 32 + ".json"


@dataclass
class Objects:
    """S3Objects' two reading calls over a dictionary."""

    stored: dict[str, bytes] = field(default_factory=dict)

    def get(self, name: str) -> StoredObject | None:
        body = self.stored.get(name)
        return None if body is None else StoredObject(body, f"etag-{name}")

    def names(self, prefix: str) -> list[str]:
        return [name for name in self.stored if name.startswith(prefix)]


T = TypeVar("T")


def _outcome(call: Callable[[], T]) -> tuple[T | None, IndexStateError | None]:
    try:
        return call(), None
    except IndexStateError as exc:
        return None, exc


SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**80), 2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from([VALID_KEY, "../" + VALID_KEY, "ingest.lock", "manifests/", "CURRENT"]),
)
JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
POINTER = st.fixed_dictionaries({}, optional={"version": JSON, "manifest": JSON, "extra": JSON})


def _bodies() -> st.SearchStrategy[bytes]:
    as_json = st.one_of(JSON, POINTER).map(lambda value: json.dumps(value, allow_nan=True).encode())
    return st.one_of(as_json, st.binary(max_size=80), as_json.map(lambda b: b[: len(b) // 2]))


@FUZZ
@given(body=_bodies())
def test_any_current_is_a_commit_publish_could_write_or_the_one_damaged_error(body: bytes) -> None:
    objects = Objects({CURRENT: body})
    commit, error = _outcome(lambda: current_commit(objects))  # type: ignore[arg-type]
    if error is not None:
        assert error.message == "the index's CURRENT pointer is damaged"
        assert "rag ingest --rebuild" in error.hint
        assert error.exit_code == 4
        # --rebuild repairs it: recovered, carrying the damaged object's etag, never an error.
        repaired = current_commit(objects, repair=True)  # type: ignore[arg-type]
        assert repaired is not None
        assert repaired.etag == f"etag-{CURRENT}"
        return
    assert commit is not None
    assert type(commit.version) is int
    assert 1 <= commit.version <= MAX_VERSION
    assert KEY.fullmatch(commit.manifest)


@FUZZ
@given(
    data=st.one_of(
        JSON,
        POINTER,
        st.fixed_dictionaries({"sources": JSON}, optional={"fingerprint": JSON, "last_ingest": JSON}),
    )
)
def test_any_manifest_text_is_a_manifest_or_the_damaged_manifest_error(data: object) -> None:
    text = json.dumps(data, allow_nan=True)
    for candidate in (text, text[: len(text) // 2]):
        manifest, error = _outcome(lambda c=candidate: parse_manifest(c, "s3://bucket/index manifest"))
        if error is not None:
            assert "index manifest is damaged" in error.message
        else:
            assert isinstance(manifest, Manifest)


@pytest.mark.parametrize(
    "stored",
    [
        {},  # no manifest at all
        {"manifests/000000000009-" + "d" * 32 + ".json": b"{trunc"},  # unfinished, newest
        {"manifests/99999999999999999999-" + "e" * 32 + ".json": b'{"sources": {}}'},  # past u64
        {"manifests/notes.txt": b'{"sources": {}}'},  # not a key publish writes
    ],
)
def test_recovery_never_takes_a_manifest_publish_could_not_have_completed(stored: dict[str, bytes]) -> None:
    objects = Objects({CURRENT: b"garbage", **stored})
    repaired = current_commit(objects, repair=True)  # type: ignore[arg-type]
    assert repaired is not None
    assert (repaired.version, repaired.manifest) == (0, "")
