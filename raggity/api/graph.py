"""The entity graph API: build or update it, inspect it, and feed graph retrieval to search."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from raggity.api.session import Raggity
from raggity.core.errors import IndexStateError, RaggityError
from raggity.core.protocols import Embedder
from raggity.core.types import Location, Query
from raggity.pipeline.graph_build import (
    GraphBuildReport,
    GraphBuildSettings,
    GraphProgress,
    build_graph,
    live_chunk_ids,
)
from raggity.pipeline.search import ChunkCosines, RankedList
from raggity.retrieval.graph_model import Graph, load_graph, normalise_entity_name
from raggity.retrieval.graph_retriever import GraphRetriever
from raggity.store.ingest_lock import IngestLock
from raggity.store.layout import IndexLayout
from raggity.store.vector_table import VectorTableReader

MISSING_GRAPH = "graph retrieval is on but the index has no entity graph yet; run `rag graph-build`"


def update_graph(
    session: Raggity,
    *,
    progress: GraphProgress | None = None,
    settings: GraphBuildSettings | None = None,
    only: Sequence[str] | None = None,
) -> GraphBuildReport:
    """Extracts entities from every live chunk not yet in the graph. The caller holds the ingest lock."""
    return build_graph(
        session.layout,
        lambda: session.generator,
        settings=settings or GraphBuildSettings(max_tokens=min(session.config.generation.max_tokens, 256)),
        progress=progress,
        only=only,
    )


def graph_build(
    session: Raggity, *, progress: GraphProgress | None = None, wait_seconds: float = 0.0
) -> GraphBuildReport:
    """`rag graph-build`: takes the index's writer lock, so it never races an ingest."""
    if not session.layout.exists():
        raise IndexStateError(f"{session.layout.root}: no index yet", "run `rag ingest PATH` first")
    with IngestLock(session.layout.lock, wait_seconds=wait_seconds):
        return update_graph(session, progress=progress)


class GraphCandidates:
    """The "graph" ranked list for HybridSearch; reloads graph.json when it changes on disk."""

    def __init__(
        self, layout: IndexLayout, embedder: Callable[[], Embedder], *, hops: int, warn: Callable[[str], None]
    ) -> None:
        self._layout = layout
        self._embedder = embedder
        self._hops = hops
        self._warn = warn
        self._stamp: tuple[int, int] | None = None
        self._retriever: GraphRetriever | None = None
        self._warned = False

    def _current(self) -> GraphRetriever | None:
        try:
            stat = self._layout.graph.stat()
        except FileNotFoundError:
            if not self._warned:
                self._warn(MISSING_GRAPH)
                self._warned = True
            self._retriever, self._stamp = None, None
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            self._retriever = GraphRetriever(
                load_graph(self._layout.graph), lambda texts: self._embedder().embed(texts), hops=self._hops
            )
            self._stamp = stamp
        return self._retriever

    def __call__(
        self, question: str, queries: Sequence[Query], limit: int, cosines: ChunkCosines
    ) -> RankedList | None:
        retriever = self._current()
        if retriever is None:
            return None
        # Ordered by closeness to the question itself (or sub-question), not to generated HyDE text.
        vector = next((q.vector for q in queries if q.text == question and q.vector is not None), None)
        closeness = None if vector is None else partial(cosines, vector)
        return RankedList("graph", tuple(retriever.retrieve(question, limit, closeness)))


# -- inspection ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class EntityCount:
    name: str
    type: str
    chunks: int


@dataclass(frozen=True)
class GraphStats:
    path: Path
    exists: bool
    chunks_processed: int
    chunks_live: int
    nodes: int
    edges: int
    generator: str
    top: tuple[EntityCount, ...]


def _load(session: Raggity) -> Graph:
    if not session.layout.graph.exists():
        raise RaggityError(f"{session.layout.graph}: no entity graph yet", "run `rag graph-build`")
    return load_graph(session.layout.graph)


def graph_stats(session: Raggity, *, top: int = 10) -> GraphStats:
    path = session.layout.graph
    graph = load_graph(path)
    live = set(live_chunk_ids(session.layout)) if session.layout.exists() else set()
    ranked = sorted(graph.nodes.values(), key=lambda n: (-len(n.chunk_ids), n.key))[:top]
    return GraphStats(
        path,
        path.exists(),
        len(graph.processed() & live),
        len(live),
        len(graph.nodes),
        len(graph.edges),
        graph.generator,
        tuple(EntityCount(n.name, n.type, len(n.chunk_ids)) for n in ranked),
    )


@dataclass(frozen=True)
class RelationView:
    subject: str
    relation: str
    object: str
    chunks: int


@dataclass(frozen=True)
class MentionView:
    chunk_id: str
    source: str
    location: Location
    text: str


@dataclass(frozen=True)
class EntityView:
    key: str
    name: str
    type: str
    relations: tuple[RelationView, ...]
    mentions: tuple[MentionView, ...]


def show_entity(session: Raggity, name: str, *, limit: int = 20) -> EntityView:
    graph = _load(session)
    key = normalise_entity_name(name)
    node = graph.nodes.get(key)
    if node is None:
        close = sorted(k for k in graph.nodes if key and (key in k or k in key))[:5]
        hint = f"similar entities: {', '.join(graph.nodes[k].name for k in close)}" if close else ""
        raise RaggityError(f"no entity {name!r} in the graph", hint or "see `rag graph stats` for entities")
    nodes = graph.nodes
    relations = tuple(
        RelationView(nodes[e.subject].name, e.relation, nodes[e.object].name, len(e.chunk_ids))
        for e in sorted(graph.relations_of(key), key=lambda e: (-len(e.chunk_ids), e.subject, e.object))
    )
    stored = VectorTableReader(session.layout.table).fetch(sorted(node.chunk_ids)[: max(limit, 0)])
    mentions = tuple(
        MentionView(cid, row.chunk.source, row.chunk.location, row.chunk.text)
        for cid, row in sorted(stored.items(), key=lambda kv: (kv[1].chunk.source, kv[1].chunk.ordinal))
    )
    return EntityView(key, node.name, node.type, relations, mentions)
