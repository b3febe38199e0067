"""The sources table: the manifest's per-file records (stamps and chunk ids), one Lance row per file.

It lives beside the chunk table (`lancedb/sources.lance`, locally and on a store) and is written only
by the difference between the records a writer last committed and its new ones: an ingest that
changes one file of a million chunks deletes one row and appends one. The manifest (store/manifest.py)
names the table version that goes with it, so the commit point stays one: `manifest.json`'s rename
locally, CURRENT on a store. Rows a dead writer wrote past that version are never read, and the next
writer restores the table to the named version before it writes (`SourcesWriter.start`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from raggity.core.errors import IndexStateError
from raggity.store.manifest import SourceEntry

REBUILD = "run `rag ingest --rebuild` to rebuild the index"

NAME = "sources.lance"
# Sources per delete predicate: one Lance version each, and a predicate Lance parses quickly.
_DELETE_SOURCES = 1000
# Rows per data file: a merge rewrites whole files, so files this size keep it small at any scale.
_FRAGMENT_ROWS = 8192
# More small fragments than this (each batch's save appends one) are merged at commit.
_MAX_SMALL_FRAGMENTS = 16


def beside(table_uri: str) -> str:
    """The sources table's URI beside the chunk table at `table_uri` (a path or an object URI)."""
    return table_uri.rstrip("/").rsplit("/", 1)[0] + "/" + NAME


def schema() -> Any:
    import pyarrow as pa  # noqa: PLC0415 - loads with lance

    return pa.schema(
        [
            ("source", pa.string()),
            ("sha256", pa.string()),
            ("size", pa.int64()),
            ("mtime_ns", pa.int64()),
            ("chunk_ids", pa.list_(pa.string())),
        ]
    )


def open_table(
    uri: str, options: Mapping[str, str], version: int | None = None, *, index_cache_bytes: int | None = None
) -> Any | None:
    """The table at `version` (latest: None), or None when there is no table at `uri`. A version the
    table does not have raises LookupError; store failures pass through to the caller's mapping.
    `index_cache_bytes`: how much of its indexes to keep in memory (None: Lance's default)."""
    import lance  # noqa: PLC0415 - lance loads on first use

    try:
        return lance.dataset(
            uri, version=version, storage_options=dict(options), index_cache_size_bytes=index_cache_bytes
        )
    except ValueError as exc:
        if "not found" not in str(exc).lower():
            raise
        if version is None:
            return None
        raise LookupError(f"the table has no version {version}") from None


def read_entries(dataset: Any) -> dict[str, SourceEntry]:
    """Every row as a record, read a batch of rows at a time (the whole table in Arrow's memory
    beside its Python objects peaked 100 MB higher at a million ids). A batch's chunk ids are read as
    one flat column and sliced: a Python list per row (pyarrow's to_pylist) took most of the time."""
    import numpy as np  # noqa: PLC0415 - loads with lance

    entries: dict[str, SourceEntry] = {}
    for batch in dataset.to_batches(batch_size=_FRAGMENT_ROWS):
        ids = batch.column("chunk_ids")
        flat = ids.flatten().to_pylist()
        ends = np.cumsum(ids.value_lengths().fill_null(0).to_numpy(zero_copy_only=False)).tolist()
        starts = [0, *ends[:-1]]
        columns = [batch.column(name).to_pylist() for name in ("source", "sha256", "size", "mtime_ns")]
        for source, sha, size, mtime, start, end in zip(*columns, starts, ends, strict=True):
            entries[source] = SourceEntry(sha, size, mtime, tuple(flat[start:end]))
    return entries


def difference(
    recorded: Mapping[str, SourceEntry], new: Mapping[str, SourceEntry]
) -> tuple[list[str], list[tuple[str, SourceEntry]]]:
    """The sources whose rows go (removed or changed) and the rows to append (changed or new)."""
    gone = [source for source, entry in recorded.items() if not _same(new.get(source), entry)]
    rows = [(source, entry) for source, entry in new.items() if not _same(recorded.get(source), entry)]
    return gone, rows


def _same(a: SourceEntry | None, b: SourceEntry) -> bool:
    # An unchanged file's record is the same object in both maps: `is` spares comparing its ids.
    return a is b or a == b


def _rows(items: Sequence[tuple[str, SourceEntry]]) -> Any:
    import pyarrow as pa  # noqa: PLC0415 - loads with lance

    return pa.table(
        {
            "source": [s for s, _ in items],
            "sha256": [e.sha256 for _, e in items],
            "size": [e.size for _, e in items],
            "mtime_ns": [e.mtime_ns for _, e in items],
            "chunk_ids": [list(e.chunk_ids) for _, e in items],
        },
        schema=schema(),
    )


def _quoted(values: Sequence[str]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


class SourcesWriter:
    """Writes one writer's records to the table: the difference from the last version it named.

    `start` is told what the committed manifest names (its version and records, or nothing: no table
    yet, a rebuild, or an old manifest with its records inline, whose next write is every row)."""

    def __init__(self, uri: str, options: Mapping[str, str]) -> None:
        self._uri = uri
        self._options = dict(options)
        self._version: int | None = None
        self._recorded: dict[str, SourceEntry] = {}

    @property
    def uri(self) -> str:
        return self._uri

    @property
    def version(self) -> int | None:
        """The version holding exactly the records last written or started from (None: none yet)."""
        return self._version

    def start(self, version: int | None, recorded: Mapping[str, SourceEntry]) -> bool:
        """Starts from the committed `version` holding `recorded`; a table moved past it by a writer
        that died before its commit is restored to it first. Returns whether it restored."""
        self._version, self._recorded = version, dict(recorded)
        if version is None:
            return False
        # Gone, or without the named version, since the records were read (they may come from a
        # store's CommittedRecords): the caller reads every file again, as when they cannot be read.
        latest = open_table(self._uri, self._options)
        if latest is None:
            raise IndexStateError(f"{self._uri}: the sources table is missing", REBUILD)
        if latest.version == version:
            return False
        try:
            named = _existing(self._uri, self._options, version)
        except LookupError as exc:
            raise IndexStateError(f"{self._uri}: {exc}", REBUILD) from None
        named.restore()
        self._version = int(_existing(self._uri, self._options).version)
        return True

    def write(self, sources: Mapping[str, SourceEntry]) -> int | None:
        """Makes the table hold `sources` and returns its version (None: nothing to hold, no table)."""
        import lance  # noqa: PLC0415 - lance loads on first use

        if self._version is None:
            if sources:
                written = lance.write_dataset(
                    _rows(sorted(sources.items())),
                    self._uri,
                    schema=schema(),
                    # "overwrite" on no table makes Lance warn on stderr, which a command shows.
                    mode="create" if open_table(self._uri, self._options) is None else "overwrite",
                    max_rows_per_file=_FRAGMENT_ROWS,
                    storage_options=self._options,
                )
                self._version = int(written.version)
            self._recorded = dict(sources)
            return self._version
        gone, rows = difference(self._recorded, sources)
        if gone or rows:
            dataset = _existing(self._uri, self._options)
            for begin in range(0, len(gone), _DELETE_SOURCES):
                dataset.delete(f"source IN ({_quoted(sorted(gone)[begin : begin + _DELETE_SOURCES])})")
            if rows:
                dataset = lance.write_dataset(
                    _rows(rows), self._uri, schema=schema(), mode="append", storage_options=self._options
                )
            self._version = int(dataset.version)
        self._recorded = dict(sources)
        return self._version

    def forget(self) -> None:
        """The index was emptied (a rebuild): the next write is every row, over whatever is there."""
        self._version, self._recorded = None, {}

    def compact(self) -> int | None:
        """Merges the small fragments per-batch appends left (and files mostly deleted) once there
        are many; full files are left alone. Returns the version to name."""
        if self._version is None:
            return None
        dataset = _existing(self._uri, self._options)
        small = [f for f in dataset.get_fragments() if f.metadata.physical_rows < _FRAGMENT_ROWS // 8]
        if len(small) > _MAX_SMALL_FRAGMENTS:
            dataset.optimize.compact_files(target_rows_per_fragment=_FRAGMENT_ROWS)
            self._version = int(_existing(self._uri, self._options).version)
        return self._version


def _existing(uri: str, options: Mapping[str, str], version: int | None = None) -> Any:
    """The table at `version` (latest: None), which the writer knows to exist."""
    dataset = open_table(uri, options, version)
    if dataset is None:
        raise LookupError(f"{uri}: the sources table is missing")
    return dataset
