"""One `rag ingest`: discover the files, take the writer lock, carry other folders' files over a
rebuild, bring the index in step (IndexSync), and update the entity graph when it is on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from raggity.config.schema import IngestConfig
from raggity.core.errors import IndexStateError, IngestIncompleteError, RaggityError, os_reason
from raggity.core.protocols import Embedder, Generator, Tokenizer
from raggity.ingest.chunker import ChunkingSettings
from raggity.ingest.discover import SkippedFile, discover, recheck
from raggity.pipeline.ingest.graph_build import (
    GraphBuildReport,
    GraphBuildSettings,
    GraphProgress,
    build_graph,
)
from raggity.pipeline.ingest.sources import file_source, in_roots
from raggity.pipeline.ingest.sync import (
    IndexSync,
    IngestProgress,
    IngestReport,
    Skipped,
    SourceFile,
    index_fingerprint,
)
from raggity.store.ingest_lock import IngestLock
from raggity.store.layout import IndexLayout
from raggity.store.manifest import load_manifest


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
    """Orchestrates one ingest over an index folder. Models are passed in ready (or as loaders for
    the graph's generator, which is loaded only when some chunk needs extracting)."""

    def __init__(
        self,
        layout: IndexLayout,
        settings: IngestConfig,
        chunking: ChunkingSettings,
        *,
        embedder: Embedder,
        tokenizer: Tokenizer,
        graph: GraphUpdate | None = None,
        warn: Callable[[str], None],
    ) -> None:
        self._layout = layout
        self._settings = settings
        self._chunking = chunking
        self._embedder = embedder
        self._tokenizer = tokenizer
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
        with IngestLock(self._layout.lock, wait_seconds=request.wait_seconds):
            found = discover(present, self._settings, index_dir=self._layout.root)
            sources: list[SourceFile] = []
            early: list[Skipped] = [Skipped(s.path, s.reason) for s in found.skipped]
            for path in found.files:
                try:
                    sources.append(
                        file_source(
                            path, max_chars=self._settings.max_file_chars, real=found.real_paths.get(path)
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
        """Brings the index in step with `sources`; the caller holds the ingest lock."""
        sync = IndexSync(
            self._layout,
            embedder=self._embedder,
            tokenizer=self._tokenizer,
            chunking=self._chunking,
            progress=progress,
        )
        return sync.run(sources, in_scope, rebuild=rebuild)

    def _update_graph(self, graph: GraphUpdate, progress: GraphProgress | None) -> None:
        """A failed graph update leaves the committed index as it is and says how to retry."""
        try:
            graph.run(self._layout, progress)
        except RaggityError as exc:
            self._warn(f"entity graph not updated: {exc}; run `rag graph-build` to retry")

    def _indexed_sources(self) -> tuple[str, ...]:
        try:
            return tuple(load_manifest(self._layout.manifest).sources)
        except IndexStateError:
            return ()  # no index yet, or a damaged one: nothing known to be indexed

    def _carried_over(
        self, in_scope: Callable[[str], bool], rebuild: bool
    ) -> tuple[list[SourceFile], list[Skipped]]:
        """A rebuild empties the whole index, so files indexed from other folders are indexed again
        with the new settings instead of silently disappearing: those that discovery would still
        take (discover.recheck) and that still hold the content the index recorded for them. The
        manifest may come with a cloned repository: a file it names that the index never held (its
        digest cannot be known to whoever wrote it) is not read. Returns the sources, and the files
        left out with the reason."""
        try:
            manifest = load_manifest(self._layout.manifest)
        except IndexStateError:
            return [], []  # damaged: nothing trustworthy to carry over
        current = index_fingerprint(self._embedder.identity, self._chunking)
        if not rebuild and manifest.fingerprint in (None, current):
            return [], []
        others = [Path(s) for s in manifest.sources if not in_scope(s)]
        checked = recheck(others, self._settings, index_dir=self._layout.root)
        dropped = [Skipped(s.path, f"not carried over the rebuild: {s.reason}") for s in checked.skipped]
        dropped += [Skipped(s.path, f"not carried over the rebuild: {s.reason}") for s in checked.excluded]
        sources = []
        for path in checked.files:
            entry = manifest.sources[str(path)]
            try:
                source = file_source(path, max_chars=self._settings.max_file_chars, real=str(path))
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


def finished(
    report: IngestReport, early: Sequence[Skipped], excluded: Sequence[SkippedFile], *, strict: bool
) -> IngestReport:
    """The report with the files skipped before indexing and those discovery excluded; under
    `strict`, any skipped file fails the ingest (after everything else was committed)."""
    report = replace(
        report,
        skipped=tuple(early) + report.skipped,
        excluded=tuple(Skipped(s.path, s.reason) for s in excluded),
    )
    if strict and report.skipped:
        raise IngestIncompleteError(
            f"{len(report.skipped)} file(s) skipped; index updated with everything else",
            "fix or exclude them, or run without --strict",
        )
    return report


@dataclass(frozen=True)
class GraphUpdate:
    """Brings an index's entity graph up to date; the generator is loaded only if needed."""

    generator: Callable[[], Generator]
    settings: GraphBuildSettings

    def run(self, layout: IndexLayout, progress: GraphProgress | None = None) -> GraphBuildReport:
        """The caller holds the index's writer lock."""
        return build_graph(layout, self.generator, settings=self.settings, progress=progress)
