"""The manifest: per-source hashes and chunk ids, and the fingerprint of the settings that built them.

It is the commit point of an ingest. Chunk rows may exist in LanceDB or Tantivy without being in
the manifest (an interrupted ingest wrote them); such rows are invisible to queries and removed by
the next ingest. Written atomically, so a kill leaves the previous manifest intact.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from raggity.core.atomic_file import atomic_write_text
from raggity.core.errors import IndexStateError

_T = TypeVar("_T")

# 2: chunk rows gained an `anchor` column, and HTML and code are read differently (cleaned HTML,
# tree-sitter boundaries): an index built by version 1 is rebuilt by the next ingest.
FORMAT_VERSION = 2


@dataclass(frozen=True)
class SourceEntry:
    sha256: str
    size: int
    mtime_ns: int
    chunk_ids: tuple[str, ...]


@dataclass(frozen=True)
class Fingerprint:
    """Settings whose change makes every stored vector or chunk boundary wrong."""

    embedder: str
    chunk_tokens: int
    parent_tokens: int
    # Absent from manifests written before the key existed, which were all built with en_stem.
    bm25_tokenizer: str = "en_stem"
    format_version: int = FORMAT_VERSION


@dataclass
class Manifest:
    fingerprint: Fingerprint | None = None
    sources: dict[str, SourceEntry] = field(default_factory=dict)
    last_ingest: float | None = None
    # True from the start of a full rebuild until its last write: the index holds only part of the files.
    rebuilding: bool = False

    def live_ids(self) -> set[str]:
        return {cid for entry in self.sources.values() for cid in entry.chunk_ids}

    def to_json(self) -> str:
        return json.dumps(
            {
                "format_version": FORMAT_VERSION,
                "fingerprint": None if self.fingerprint is None else vars(self.fingerprint),
                "last_ingest": self.last_ingest,
                "rebuilding": self.rebuilding,
                "sources": {
                    src: {
                        "sha256": e.sha256,
                        "size": e.size,
                        "mtime_ns": e.mtime_ns,
                        "chunk_ids": list(e.chunk_ids),
                    }
                    for src, e in sorted(self.sources.items())
                },
            },
            indent=0,
        )

    def save(self, path: Path) -> None:
        self.last_ingest = time.time()
        atomic_write_text(path, self.to_json())


def load_manifest(path: Path) -> Manifest:
    if not path.exists():
        return Manifest()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise _damaged(str(path), exc) from exc
    return parse_manifest(text, str(path))


def parse_manifest(text: str, where: str) -> Manifest:
    """The manifest in `text` (a file's, or an object's on a store, named by `where` in the error)."""
    try:
        return _parsed(json.loads(text))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _damaged(where, exc) from exc


def _damaged(where: str, exc: Exception) -> IndexStateError:
    return IndexStateError(
        f"{where}: index manifest is damaged ({exc.__class__.__name__})",
        "run `rag ingest --rebuild` to rebuild the index",
    )


def _parsed(data: object) -> Manifest:
    """The manifest in `data`, every value of the type it is used as: a manifest is data read from
    disk (an index folder may come with a cloned repository), and a valid JSON of the wrong shape
    crashed status, search and ingest far from here. Raises TypeError or ValueError."""
    data = _typed(data, dict, "the manifest")
    fingerprint = data.get("fingerprint")
    if fingerprint is not None:
        fingerprint = _typed(fingerprint, dict, "fingerprint")
        _typed(fingerprint.get("embedder"), str, "fingerprint.embedder")
        for name in ("chunk_tokens", "parent_tokens", "format_version"):
            if name in fingerprint:
                _typed(fingerprint[name], int, f"fingerprint.{name}")
    last_ingest = data.get("last_ingest")
    if last_ingest is not None and (
        isinstance(last_ingest, bool) or not isinstance(last_ingest, int | float)
    ):
        raise TypeError("last_ingest is not a number")
    sources: dict[str, SourceEntry] = {}
    for src, raw in _typed(data["sources"], dict, "sources").items():
        e = _typed(raw, dict, "a source entry")
        ids = _typed(e["chunk_ids"], list, "chunk_ids")
        if not all(isinstance(cid, str) for cid in ids):
            raise TypeError("a chunk id is not a string")
        sources[src] = SourceEntry(
            _typed(e["sha256"], str, "sha256"),
            _typed(e["size"], int, "size"),
            _typed(e["mtime_ns"], int, "mtime_ns"),
            tuple(ids),
        )
    return Manifest(
        fingerprint=Fingerprint(**fingerprint) if fingerprint else None,
        sources=sources,
        last_ingest=last_ingest,
        rebuilding=bool(data.get("rebuilding", False)),
    )


def _typed(value: object, kind: type[_T], what: str) -> _T:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"{what} is not a {kind.__name__}")
    return value


class ManifestCache:
    """Reloads the manifest only when the file changed, for long-lived query processes."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._stamp: tuple[int, int] | None = None
        self._manifest = Manifest()
        self._live: frozenset[str] = frozenset()

    def current(self) -> tuple[Manifest, frozenset[str]]:
        try:
            stat = self._path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            stamp = None
        if stamp != self._stamp:
            self._manifest = load_manifest(self._path)
            self._live = frozenset(self._manifest.live_ids())
            self._stamp = stamp
        return self._manifest, self._live
