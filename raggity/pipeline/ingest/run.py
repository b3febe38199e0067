"""One `rag ingest`, the same over an index folder and an index on object storage: take the store's
writer lock, discover the files, carry other folders' files over a rebuild, bring the index in step
(sync.py), and update the entity graph when it is on (an index folder only, so far)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from raggity.config.schema import IngestConfig
from raggity.core.errors import IndexStateError, RaggityError
from raggity.core.protocols import Embedder
from raggity.documents.chunker import ChunkingSettings
from raggity.documents.discover import discover, recheck
from raggity.documents.readers.ocr_options import ocr_options
from raggity.documents.readers.source import os_error_reason
from raggity.pipeline.graph.build import GraphProgress, GraphUpdate
from raggity.pipeline.ingest.plan import index_fingerprint
from raggity.pipeline.ingest.reading import open_source
from raggity.pipeline.ingest.report import IngestProgress, IngestReport, Skipped, finished
from raggity.pipeline.ingest.sources import SourceFile, SourceNames, in_roots
from raggity.pipeline.ingest.sync import IndexSync, RowWriter
from raggity.store.index_seam import IndexStore, Manifest

__all__ = ["IngestRequest", "IngestRun", "finished"]


@dataclass(frozen=True)
class IngestRequest:
    """What to ingest and how: absolute roots, and the options of `rag ingest`."""

    roots: tuple[Path, ...]
    rebuild: bool = False
    strict: bool = False
    wait_seconds: float = 0.0
    # "local" or "ray"; None: [ingest] engine. ray_address None: [ingest] ray_address.
    engine: str | None = None
    ray_address: str | None = None


class IngestRun:
    """Orchestrates one ingest over an index in `store`, its rows made by `rows` (an engine).
    Models are passed in ready (or as loaders for the graph's generator, which is loaded only when
    some chunk needs extracting). `index_dir`: the index's folder, or its local state folder, which
    discovery never walks into."""

    def __init__(
        self,
        store: IndexStore,
        settings: IngestConfig,
        chunking: ChunkingSettings,
        *,
        embedder: Embedder,
        rows: RowWriter,
        index_dir: Path,
        graph: GraphUpdate | None = None,
        root: Path | None = None,
        warn: Callable[[str], None],
    ) -> None:
        self._store = store
        self._settings = settings
        self._chunking = chunking
        self._embedder = embedder
        self._rows = rows
        self._index_dir = index_dir
        self._graph = graph
        self._root = root
        self._warn = warn

    def run(
        self,
        request: IngestRequest,
        *,
        progress: IngestProgress | None = None,
        graph_progress: GraphProgress | None = None,
    ) -> IngestReport:
        indexed = tuple(self._committed().sources)
        names = SourceNames.of(self._root, indexed, rebuild=request.rebuild)
        # The folders this ingest speaks for: deletion and carry-over are scoped by them.
        in_scope = in_roots(list(request.roots), names)
        present = [root for root in request.roots if root.exists()]
        for root in (root for root in request.roots if not root.exists()):
            # A folder that was indexed and has since been deleted is ingested as empty, which
            # removes its files; before, they stayed searchable for good (short of --rebuild).
            if not any(map(in_roots([root], names), indexed)):
                raise RaggityError(f"{root}: no such file or folder", "check the path")
        with self._store.lock(request.wait_seconds):
            found = discover(present, self._settings, index_dir=self._index_dir)
            early: list[Skipped] = [Skipped(s.path, s.reason) for s in found.skipped]
            sources: list[SourceFile] = []
            for path in found.files:
                opened = self._open(path, found.real_paths.get(path), names.name(path))
                if isinstance(opened, Skipped):
                    early.append(opened)
                else:
                    sources.append(opened)
            carried, dropped = self._carried_over(in_scope, request.rebuild, names)
            sources += carried
            early += dropped
            for skipped in early:
                if progress is not None:
                    progress.warn(skipped.source, skipped.reason)
            report = self.index_sources(sources, in_scope, rebuild=request.rebuild, progress=progress)
            if self._graph is not None:
                self._update_graph(self._graph, graph_progress)
        return finished(report, early, found.excluded, strict=request.strict)

    def index_sources(
        self,
        sources: Sequence[SourceFile],
        in_scope: Callable[[str], bool],
        *,
        rebuild: bool = False,
        progress: IngestProgress | None = None,
    ) -> IngestReport:
        """Brings the index in step with `sources`; the caller holds the store's lock."""
        sync = IndexSync(
            self._store, embedder=self._embedder, chunking=self._chunking, rows=self._rows, progress=progress
        )
        return sync.run(sources, in_scope, rebuild=rebuild)

    def _update_graph(self, graph: GraphUpdate, progress: GraphProgress | None) -> None:
        """A failed graph update leaves the committed index as it is and says how to retry."""
        layout = self._store.layout
        if layout is None:
            self._warn("the entity graph is not built for an index on object storage yet")
            return
        try:
            graph.run(layout, progress)
        except RaggityError as exc:
            self._warn(f"entity graph not updated: {exc}; run `rag graph-build` to retry")

    def _open(self, path: Path, real: str | None, name: str) -> SourceFile | Skipped:
        return open_source(
            path,
            name=name,
            real=real,
            max_chars=self._settings.max_file_chars,
            ocr=ocr_options(self._settings),
        )

    def _committed(self) -> Manifest:
        try:
            return self._store.committed()
        except IndexStateError:
            return Manifest()  # no index yet, or a damaged one: nothing known to be indexed

    def _carried_over(
        self, in_scope: Callable[[str], bool], rebuild: bool, names: SourceNames
    ) -> tuple[list[SourceFile], list[Skipped]]:
        """A rebuild empties the whole index, so files indexed from other folders are indexed again
        with the new settings instead of silently disappearing: those that discovery would still
        take (discover.recheck) and that still hold the content the index recorded for them. The
        manifest may come with a cloned repository: a file it names that the index never held (its
        digest cannot be known to whoever wrote it) is not read. Returns the sources, and the files
        left out with the reason."""
        manifest = self._committed()  # damaged: nothing trustworthy to carry over
        current = index_fingerprint(self._embedder.identity, self._chunking)
        if not rebuild and manifest.fingerprint in (None, current):
            return [], []
        # Each file as it stands on this machine, and the name the index records it by.
        others = {names.path(s): s for s in manifest.sources if not in_scope(s)}
        checked = recheck(list(others), self._settings, index_dir=self._index_dir)
        dropped = [
            Skipped(others.get(Path(s.path), s.path), f"{NOT_CARRIED}: {s.reason}")
            for s in (*checked.skipped, *checked.excluded)
        ]
        sources = []
        for path in checked.files:
            name = others[path]
            entry = manifest.sources[name]
            opened = self._open(path, str(path), name)
            try:
                if isinstance(opened, Skipped):
                    dropped.append(Skipped(name, f"{NOT_CARRIED}: {opened.reason}"))
                elif opened.size == entry.size and opened.digest() == entry.sha256:
                    sources.append(opened)
                else:
                    dropped.append(Skipped(name, f"{NOT_CARRIED}: {CHANGED_SINCE_INDEXED}"))
            except OSError as exc:
                dropped.append(Skipped(name, f"{NOT_CARRIED}: {os_error_reason(exc)}"))
        taken = {s.source for s in sources} | {s.source for s in dropped}
        dropped += [Skipped(n, f"{NOT_CARRIED}: {NOT_TAKEN}") for n in others.values() if n not in taken]
        return sources, dropped


# A carried-over file is read again only with the content the index held: one edited since is indexed
# when its folder is ingested again.
NOT_CARRIED = "not carried over the rebuild"
CHANGED_SINCE_INDEXED = "changed since it was indexed (ingest its folder again)"
NOT_TAKEN = "not a file `rag ingest` reads there"
