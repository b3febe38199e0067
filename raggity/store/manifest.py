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

from raggity.core.atomic_file import atomic_write_text
from raggity.core.errors import IndexStateError

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
        data = json.loads(path.read_text(encoding="utf-8"))
        fingerprint = data.get("fingerprint")
        return Manifest(
            fingerprint=Fingerprint(**fingerprint) if fingerprint else None,
            sources={
                src: SourceEntry(e["sha256"], int(e["size"]), int(e["mtime_ns"]), tuple(e["chunk_ids"]))
                for src, e in data["sources"].items()
            },
            last_ingest=data.get("last_ingest"),
            rebuilding=bool(data.get("rebuilding", False)),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexStateError(
            f"{path}: index manifest is damaged ({exc.__class__.__name__})",
            "run `rag ingest --rebuild` to rebuild the index",
        ) from exc


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
