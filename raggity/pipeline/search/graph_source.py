"""The entity graph of one index for graph retrieval: reloaded when graph.json changes on disk."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from raggity.core.protocols import EmbedTexts
from raggity.store.layout import IndexLayout

if TYPE_CHECKING:  # the graph's modules load only where [retrieval] graph is on
    from raggity.pipeline.search.hybrid import IndexSnapshot
    from raggity.retrieval.graph_retriever import GraphRanker, GraphRetriever

MISSING_GRAPH = "graph retrieval is on but the index has no entity graph yet; run `rag graph-build`"


class GraphSource:
    """`current()` is the ranker over the graph as it is on disk now, or None (warned once) when the
    index has no graph yet. A ranker, with its node-name vectors, is kept while graph.json is unchanged."""

    def __init__(
        self, layout: IndexLayout, embed: EmbedTexts, *, hops: int, warn: Callable[[str], None]
    ) -> None:
        self._layout = layout
        self._embed = embed
        self._hops = hops
        self._warn = warn
        self._stamp: tuple[int, int] | None = None
        self._ranker: GraphRanker | None = None
        self._warned = False

    def current(self) -> GraphRanker | None:
        try:
            stat = self._layout.graph.stat()
        except FileNotFoundError:
            if not self._warned:
                self._warn(MISSING_GRAPH)
                self._warned = True
            self._ranker, self._stamp = None, None
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            from raggity.retrieval.graph_model import load_graph  # noqa: PLC0415 - see TYPE_CHECKING above
            from raggity.retrieval.graph_retriever import GraphRanker  # noqa: PLC0415 - see TYPE_CHECKING above

            self._ranker = GraphRanker(load_graph(self._layout.graph), self._embed, hops=self._hops)
            self._stamp = stamp
        return self._ranker

    def leaf(self, snapshot: IndexSnapshot, limit: int) -> GraphRetriever | None:
        """Graph retrieval over `snapshot` (see HybridRetriever's `graph`), or None without a graph."""
        from raggity.retrieval.graph_retriever import GraphRetriever  # noqa: PLC0415 - see TYPE_CHECKING above

        ranker = self.current()
        return (
            None if ranker is None else GraphRetriever(ranker, snapshot.table, snapshot.filter, limit=limit)
        )
