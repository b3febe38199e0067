"""One `rag ingest`, the same over an index folder and an index on object storage: take the store's
writer lock, discover the files, carry other folders' files over a rebuild, bring the index in step
(sync.py), and update the entity graph when it is on (an index folder only, so far)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from raggity.config.schema import IngestConfig
from raggity.core.errors import IndexStateError, RaggityError, os_reason
from raggity.core.protocols import Embedder
from raggity.ingest.chunker import ChunkingSettings
from raggity.ingest.discover import discover, recheck
from raggity.ingest.readers.ocr_options import ocr_options
from raggity.pipeline.graph.build import GraphProgress, GraphUpdate
from raggity.pipeline.ingest.plan import index_fingerprint
from raggity.pipeline.ingest.report import IngestProgress, IngestReport, Skipped, finished
from raggity.pipeline.ingest.sources import SourceFile, file_source, in_roots
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
        warn: Callable[[str], None],
    ) -> None:
        self._store = store
        self._settings = settings
        self._chunking = chunking
        self._embedder = embedder
        self._rows = rows
        self._index_dir = index_dir
        self._graph = graph
        self._warn = warn

    def run(
        self,
        request: IngestRequest,
        *,
        progress: IngestProgress | None = None,
        graph_progress: GraphProgress | None = None,
    ) -> IngestReport:
        # The folders this ingest speaks for: deletion and carry-over are scoped by them.
        in_scope = in_roots(list(request.roots))
        present = [root for root in request.roots if root.exists()]
        gone = [root for root in request.roots if not root.exists()]
        if gone:
            # A folder that was indexed and has since been deleted is ingested as empty, which
            # removes its files; before, they stayed searchable for good (short of --rebuild).
            indexed = self._indexed_sources()
            for root in gone:
                if not any(map(in_roots([root]), indexed)):
                    raise RaggityError(f"{root}: no such file or folder", "check the path")
        with self._store.lock(request.wait_seconds):
            found = discover(present, self._settings, index_dir=self._index_dir)
            sources: list[SourceFile] = []
            early: list[Skipped] = [Skipped(s.path, s.reason) for s in found.skipped]
            for path in found.files:
                try:
                    sources.append(
                        file_source(
                            path,
                            max_chars=self._settings.max_file_chars,
                            real=found.real_paths.get(path),
                            ocr=ocr_options(self._settings),
                        )
                    )
                except OSError as exc:
                    early.append(Skipped(str(path), f"unreadable: {os_reason(exc)}"))
            for skipped in early:
                if progress is not None:
                    progress.warn(skipped.source, skipped.reason)
            carried, dropped = self._carried_over(in_scope, request.rebuild)
            sources += carried
            for skipped in dropped:
                if progress is not None:
                    progress.warn(skipped.source, skipped.reason)
            early += dropped
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

    def _indexed_sources(self) -> tuple[str, ...]:
        return tuple(self._committed().sources)

    def _committed(self) -> Manifest:
        try:
            return self._store.committed()
        except IndexStateError:
            return Manifest()  # no index yet, or a damaged one: nothing known to be indexed

    def _carried_over(
        self, in_scope: Callable[[str], bool], rebuild: bool
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
        others = [Path(s) for s in manifest.sources if not in_scope(s)]
        checked = recheck(others, self._settings, index_dir=self._index_dir)
        dropped = [Skipped(s.path, f"not carried over the rebuild: {s.reason}") for s in checked.skipped]
        dropped += [Skipped(s.path, f"not carried over the rebuild: {s.reason}") for s in checked.excluded]
        sources = []
        for path in checked.files:
            entry = manifest.sources[str(path)]
            try:
                source = file_source(
                    path,
                    max_chars=self._settings.max_file_chars,
                    real=str(path),
                    ocr=ocr_options(self._settings),
                )
                same = source.size == entry.size and source.digest() == entry.sha256
            except OSError as exc:
                dropped.append(
                    Skipped(str(path), f"not carried over the rebuild: unreadable: {os_reason(exc)}")
                )
                continue
            if same:
                sources.append(source)
            else:
                dropped.append(Skipped(str(path), CHANGED_SINCE_INDEXED))
        taken = {s.source for s in sources} | {s.source for s in dropped}
        dropped += [Skipped(str(p), NOT_TAKEN) for p in others if str(p) not in taken]
        return sources, dropped


# A carried-over file is read again only with the content the index held: one edited since is indexed
# when its folder is ingested again.
CHANGED_SINCE_INDEXED = "not carried over the rebuild: changed since it was indexed (ingest its folder again)"
NOT_TAKEN = "not carried over the rebuild: not a file `rag ingest` reads there"
