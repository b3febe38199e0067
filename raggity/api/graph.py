"""The entity graph API: build or update it, and inspect it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from raggity.api.local_only import local_layout
from raggity.api.session import Raggity
from raggity.config.schema import Config
from raggity.core.errors import RaggityError
from raggity.core.protocols import Generator
from raggity.core.types import Location
from raggity.pipeline.graph.build import GraphBuildReport, GraphProgress, live_chunk_ids
from raggity.retrieval.graph_model import Graph, load_graph, normalise_entity_name
from raggity.store.ingest_lock import IngestLock
from raggity.store.layout import IndexLayout
from raggity.store.vector_table import VectorTableReader


def graph_build(
    config: Config,
    *,
    generator: Generator | None = None,
    progress: GraphProgress | None = None,
    wait_seconds: float = 0.0,
) -> GraphBuildReport:
    """`rag graph-build`: extracts entities from every live chunk not yet in the graph. Takes the
    index's writer lock, so it never races an ingest. `generator` defaults to the configured model,
    loaded only if some chunk needs extracting."""
    local_layout(config, "rag graph-build")
    session = Raggity(config, generator=generator)
    layout = session.layout.require()
    with IngestLock(layout.lock, wait_seconds=wait_seconds):
        return session.indexer.graph_update().run(layout, progress)


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


def _load(layout: IndexLayout) -> Graph:
    if not layout.graph.exists():
        raise RaggityError(f"{layout.graph}: no entity graph yet", "run `rag graph-build`")
    return load_graph(layout.graph)


def graph_stats(config: Config, *, top: int = 10) -> GraphStats:
    layout = local_layout(config, "rag graph")
    layout.refuse_a_file()
    path = layout.graph
    graph = load_graph(path)
    live = set(live_chunk_ids(layout)) if layout.exists() else set()
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


def show_entity(config: Config, name: str, *, limit: int = 20) -> EntityView:
    layout = local_layout(config, "rag graph")
    layout.refuse_a_file()
    graph = _load(layout)
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
    stored = VectorTableReader(layout.table).fetch(sorted(node.chunk_ids)[: max(limit, 0)])
    mentions = tuple(
        MentionView(cid, row.chunk.source, row.chunk.location, row.chunk.text)
        for cid, row in sorted(stored.items(), key=lambda kv: (kv[1].chunk.source, kv[1].chunk.ordinal))
    )
    return EntityView(key, node.name, node.type, relations, mentions)
