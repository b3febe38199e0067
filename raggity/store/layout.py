"""Names of the files and folders inside one index folder."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from raggity.core.errors import IndexLocationError, IndexStateError, os_reason

MARKER_NAME = ".raggity-index"


@dataclass(frozen=True)
class IndexLayout:
    root: Path

    @property
    def marker(self) -> Path:
        """Written when raggity creates (or adopts) the folder: only a marked folder is written or cleaned."""
        return self.root / MARKER_NAME

    @property
    def lancedb(self) -> Path:
        return self.root / "lancedb"

    @property
    def table(self) -> Path:
        return self.lancedb / "chunks.lance"

    @property
    def sources(self) -> Path:
        """The manifest's per-file records (store/sources_table.py), at the version it names."""
        return self.lancedb / "sources.lance"

    @property
    def tantivy(self) -> Path:
        return self.root / "tantivy"

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    @property
    def lock(self) -> Path:
        return self.root / "ingest.lock"

    @property
    def graph(self) -> Path:
        return self.root / "graph.json"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    @property
    def calibration(self) -> Path:
        """The answer thresholds fitted on this index's own chunks (`rag calibrate --corpus`)."""
        return self.root / "calibration.json"

    def exists(self) -> bool:
        return self.manifest.is_file()

    def refuse_a_file(self) -> None:
        """The one error for an `[index] path` that is a file: reading its entries would fail with
        "Not a directory", and "no index yet" would send the user to `rag ingest`, which refuses it."""
        if self.root.exists() and not self.root.is_dir():
            raise IndexLocationError(
                f"{self.root}: the index path is a file, not a folder", "set [index] path to a folder"
            )

    def require(self) -> IndexLayout:
        """This layout, or the one "no index yet" error every reading command gives (exit 4)."""
        self.refuse_a_file()
        self.check_entries()
        if not self.exists():
            raise IndexStateError(f"{self.root}: no index yet", "run `rag ingest PATH` first")
        return self

    def check_entries(self, *, deep: bool = False) -> None:
        """Refuses an index folder whose own entries are not what raggity made: a link (a cloned
        repository's `.raggity/lancedb` pointing at the user's own index would have every row of it
        deleted as leftovers), a FIFO, or a folder where a file belongs and the reverse. `deep`: every
        entry below the folders too, before anything is written or deleted there."""
        folders = {self.lancedb, self.tantivy, self.cache}
        for entry in self.own_entries():
            try:
                mode = os.lstat(entry).st_mode
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise _foreign(entry, f"cannot be checked ({os_reason(exc)})") from exc
            if stat.S_ISLNK(mode):
                raise _foreign(entry, "is a symbolic link")
            wanted = stat.S_ISDIR(mode) if entry in folders else stat.S_ISREG(mode)
            if not wanted:
                raise _foreign(entry, "is not a folder" if entry in folders else "is not a regular file")
            if deep and entry in folders:
                _check_below(entry)

    def own_entries(self) -> tuple[Path, ...]:
        """Everything raggity may create in the folder: what `rag status` counts, and all that an index
        made before the marker may hold to be adopted."""
        return (
            self.marker,
            self.lancedb,
            self.tantivy,
            self.manifest,
            self.lock,
            self.graph,
            self.cache,
            self.calibration,
        )


def _check_below(folder: Path) -> None:
    """Nothing below `folder` is a link or anything but a folder or a regular file (the walk does not
    follow links, so it stays inside)."""

    def fail(exc: OSError) -> None:
        raise _foreign(Path(exc.filename or folder), f"cannot be checked ({os_reason(exc)})")

    for parent, dirs, files in os.walk(folder, onerror=fail):
        for name in dirs + files:
            path = os.path.join(parent, name)
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                continue  # a cache entry evicted by a concurrent `rag ask`
            except OSError as exc:
                fail(exc)
            if stat.S_ISLNK(mode):
                raise _foreign(Path(path), "is a symbolic link")
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise _foreign(Path(path), "is not a regular file")


def _foreign(path: Path, what: str) -> IndexStateError:
    return IndexStateError(
        f"{path}: {what}, inside the index folder; raggity neither follows nor deletes through it",
        f"remove {path} (and check where the index folder came from), then run `rag ingest --rebuild`",
    )
