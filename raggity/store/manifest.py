"""The manifest: per-source hashes and chunk ids, and the fingerprint of the settings that built them.

It is the commit point of an ingest. Chunk rows may exist in LanceDB or Tantivy without being in
the manifest (an interrupted ingest wrote them); such rows are invisible to queries and removed by
the next ingest. Written atomically, so a kill leaves the previous manifest intact.

Stored in two parts: the document (`manifest.json` locally, an object under `manifests/` on a store)
holds the header (fingerprint, last ingest, rebuilding, counts) and names a version of the sources
table (store/sources_table.py), which holds the per-file records, one row per file. A document
written before the table existed (format 2) lists the records itself and reads as before.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
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

    def chunk_count(self) -> int:
        """How many chunk ids the records list (ids are unique: each derives from its file's name)."""
        return sum(len(e.chunk_ids) for e in self.sources.values())

    def header_json(self, sources_version: int | None, chunk_version: int | None = None) -> str:
        """The document naming version `sources_version` of the sources table, which holds exactly
        this manifest's records (None: it has none), and `chunk_version`, a version of the chunk
        table whose rows are exactly the chunks listed (None: not known to be, readers filter)."""
        document = {
            "format_version": FORMAT_VERSION,
            "fingerprint": None if self.fingerprint is None else vars(self.fingerprint),
            "last_ingest": self.last_ingest,
            "rebuilding": self.rebuilding,
            "sources_table": {
                "version": sources_version,
                "files": len(self.sources),
                "chunks": self.chunk_count(),
            },
        }
        if chunk_version is not None:
            document["chunk_table"] = {"version": chunk_version}
        return json.dumps(document, indent=0)

    def to_json(self) -> str:
        """The document of format 2, records inline: what an index written before the sources table
        holds (kept to write such an index in tests and to measure it in bench/manifest_cost.py)."""
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


@dataclass(frozen=True)
class Header:
    """A manifest document as read: `manifest` without records when they are in the sources table
    (`sources_version`, None when there are none), with them when the document lists them (`inline`,
    format 2). `files` and `chunks` count the records without reading them."""

    manifest: Manifest
    sources_version: int | None
    files: int
    chunks: int
    inline: bool
    # A version of the chunk table holding exactly the listed chunks: a reader that opens it needs
    # no list of chunk ids to hide rows an interrupted ingest left (None: it filters by the records).
    chunk_version: int | None = None


def save_header(
    path: Path, manifest: Manifest, sources_version: int | None, chunk_version: int | None = None
) -> None:
    """Replaces the local manifest atomically: the commit point of a local index."""
    manifest.last_ingest = time.time()
    atomic_write_text(path, manifest.header_json(sources_version, chunk_version))


def name_chunk_version(path: Path, version: int) -> None:
    """Names `version` of the chunk table in the local manifest document, left otherwise as it is:
    for a compaction that wrote the named version's rows, the same rows, into a new one. The caller
    holds the index's lock."""
    document = json.loads(path.read_text(encoding="utf-8"))
    document["chunk_table"] = {"version": version}
    atomic_write_text(path, json.dumps(document, indent=0))


def load_header(path: Path) -> Header:
    """The local manifest document (no index yet: an empty one)."""
    if not path.exists():
        return Header(Manifest(), None, 0, 0, inline=True)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise _damaged(str(path), exc) from exc
    return parse_header(text, str(path))


def load_manifest(path: Path) -> Manifest:
    """The committed manifest of the index folder holding `path`, its records read from the sources
    table beside the chunk table (lancedb/sources.lance) at the version the document names."""
    return local_records(load_header(path), path)


def local_records(header: Header, path: Path) -> Manifest:
    """The manifest of `header`, read from the manifest file `path`, with its records."""
    try:
        return with_records(header, _local_sources(path), {}, str(path))
    except (OSError, RuntimeError, ValueError) as exc:  # Lance's words for unreadable local files
        raise _damaged(str(path), exc) from exc


def _local_sources(manifest: Path) -> str:
    """The sources table of the index folder holding the manifest file `manifest`."""
    return str(manifest.parent / "lancedb" / "sources.lance")


def check_local_records(header: Header, path: Path) -> None:
    """The damaged-manifest error when the sources table beside the manifest file `path` lacks the
    version `header` names; the table is opened, not read (for a reader that needs no records)."""
    if header.inline or header.sources_version is None:
        return
    try:
        records_table(header, _local_sources(path), {}, str(path))
    except (OSError, RuntimeError, ValueError) as exc:  # Lance's words for unreadable local files
        raise _damaged(str(path), exc) from exc


def with_records(header: Header, sources_uri: str, options: dict[str, str], where: str) -> Manifest:
    """The manifest of `header` with its records, read from the sources table at `sources_uri` when the
    document names a version of it. A missing table or version is the damaged-manifest error; a store's
    failures pass through to the caller's mapping."""
    if header.inline or header.sources_version is None:
        return header.manifest
    from raggity.store.sources_table import read_entries  # noqa: PLC0415 - imports this module

    dataset = records_table(header, sources_uri, options, where)
    try:
        return replace(header.manifest, sources=read_entries(dataset))
    except (KeyError, TypeError, AttributeError) as exc:  # a table of another shape
        raise _damaged(where, exc) from exc


def records_table(header: Header, sources_uri: str, options: dict[str, str], where: str) -> object:
    """The sources table at the version `header` names, opened, not read (a reader that needs no
    records still refuses an index whose records are lost); the damaged-manifest error when the
    table or the version is missing. `header` names a version (not inline)."""
    from raggity.store.sources_table import open_table  # noqa: PLC0415 - imports this module

    try:
        dataset = open_table(sources_uri, options, header.sources_version)
    except LookupError:
        dataset = None
    if dataset is None:
        raise IndexStateError(
            f"{where}: the manifest names version {header.sources_version} of its sources table, "
            f"which {sources_uri} does not have",
            "run `rag ingest --rebuild` to rebuild the index",
        )
    return dataset


class CommittedRecords:
    """The records of the last commit one store read, kept for its next read of the same commit. An
    ingest reads the committed manifest before its lock (the names it indexed), under it (files to
    carry over) and when its writer opens; at a million chunks each read of the sources table took
    about a second. A commit is known by its document: the sources table's version, its counts and
    the time of the save, which every save sets anew. Each read returns a copy of the records (an
    ingest edits its manifest); the writer's read, the last of an ingest, lets them go."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._sources: dict[str, SourceEntry] = {}

    def read(self, header: Header, load: Callable[[Header], Manifest], *, keep: bool = True) -> Manifest:
        """`header`'s manifest with its records, loaded by `load` unless this commit's are kept."""
        if header.inline or header.sources_version is None:
            return load(header)
        key = (header.sources_version, header.files, header.chunks, header.manifest.last_ingest)
        sources = self._sources if key == self._key else load(header).sources
        self._key, self._sources = (key, sources) if keep else (None, {})
        return replace(header.manifest, sources=dict(sources))

    def forget(self) -> None:
        """Lets the kept records go (a rebuild reads none)."""
        self._key, self._sources = None, {}


def parse_header(text: str, where: str) -> Header:
    """The manifest document in `text` (a file's, or an object's on a store, named by `where` in the
    error)."""
    try:
        data = json.loads(text)
        manifest = _parsed(data)
        table = data.get("sources_table")
        if table is None:
            chunks = sum(len(e.chunk_ids) for e in manifest.sources.values())
            return Header(manifest, None, len(manifest.sources), chunks, inline=True)
        table = _typed(table, dict, "sources_table")
        version = _lance_version(table["version"], "sources_table.version")
        files = _typed(table["files"], int, "sources_table.files")
        chunks = _typed(table["chunks"], int, "sources_table.chunks")
        rows = data.get("chunk_table")
        rows_version = None if rows is None else _typed(rows, dict, "chunk_table")["version"]
        return Header(
            manifest, version, files, chunks, False, _lance_version(rows_version, "chunk_table.version")
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _damaged(where, exc) from exc


def _lance_version(version: object, what: str) -> int | None:
    """`version` as a Lance version, or None. Lance numbers versions from 1; its Python binding takes
    a signed 64-bit integer (2**64 raised OverflowError from Lance)."""
    if version is None:
        return None
    number = _typed(version, int, what)
    if not 1 <= number < 2**63:
        raise ValueError(f"{what} is not a Lance version")
    return number


def parse_manifest(text: str, where: str) -> Manifest:
    """The manifest document in `text` as it stands: its records only when it lists them (format 2);
    a reader of a newer one reads them with `with_records`."""
    return parse_header(text, where).manifest


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
    # A document naming the sources table lists no records itself.
    listed = {} if "sources_table" in data and "sources" not in data else data["sources"]
    for src, raw in _typed(listed, dict, "sources").items():
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


class HeaderCache:
    """Re-reads the manifest document only when the file changed, for long-lived query processes
    (its records are the caller's to read, when it needs them: raggity.pipeline.search.hybrid)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._stamp: tuple[int, int] | None = None
        self._header = Header(Manifest(), None, 0, 0, inline=True)

    def current(self) -> Header:
        """The document as the file holds it now: the same object while the file is unchanged."""
        try:
            stat = self._path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            stamp = None
        if stamp != self._stamp:
            self._header = load_header(self._path)
            self._stamp = stamp
        return self._header
