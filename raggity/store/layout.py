"""Names of the files and folders inside one index folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from raggity.core.errors import IndexLocationError, IndexStateError

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
        if not self.exists():
            raise IndexStateError(f"{self.root}: no index yet", "run `rag ingest PATH` first")
        return self

    def own_entries(self) -> tuple[Path, ...]:
        """Everything raggity may create in the folder: what `rag status` counts, and all that an index
        made before the marker may hold to be adopted."""
        return (self.marker, self.lancedb, self.tantivy, self.manifest, self.lock, self.graph, self.cache)
