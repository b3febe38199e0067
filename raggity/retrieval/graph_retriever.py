"""Graph retrieval: link the question's entities to graph nodes, expand their neighbourhood, and rank
the chunks that mention the nodes found by their closeness to the question.

`GraphRanker` is the pure ranking over one graph; `GraphRetriever` is the leaf retriever over an
index snapshot.

Linking is by exact normalised name (question n-grams against node keys) and by embedding
similarity of the n-grams to node names (vectors computed once, on first use, and kept in memory).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from raggity.core.protocols import EmbedTexts, Vectors
from raggity.core.stopwords import ENGLISH_STOPWORDS
from raggity.core.types import Candidate, Query
from raggity.retrieval.graph_model import Graph, name_tokens, normalise_entity_name
from raggity.retrieval.ranked import committed_pairs, ranked_candidates
from raggity.store.vector_table import VectorTableReader

# Cosine with the question of each chunk id given (ids without a stored vector are left out).
Closeness = Callable[[Sequence[str]], dict[str, float]]

_MAX_NGRAM = 4
_MAX_EMBEDDED_NGRAMS = 48
# Chunks taken by graph weight before ordering by closeness: enough to hold a neighbourhood of a
# few specific entities, few enough that closeness never costs more than a small matrix product.
_POOL = 200


def question_ngrams(question: str, max_n: int = _MAX_NGRAM) -> list[str]:
    """Word n-grams of the question (longest first) that neither start nor end with a stopword."""
    words = name_tokens(question)
    grams: list[str] = []
    for n in range(min(max_n, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            if gram[0] in ENGLISH_STOPWORDS or gram[-1] in ENGLISH_STOPWORDS:
                continue
            grams.append(" ".join(gram))
    return list(dict.fromkeys(grams))


class GraphRanker:
    """Ranks the chunks of one graph for a question; node-name vectors are computed once."""

    def __init__(
        self,
        graph: Graph,
        embed: EmbedTexts | None = None,
        *,
        hops: int = 1,
        similarity: float = 0.8,
        max_node_chunks: int = 50,
    ) -> None:
        self.graph = graph
        self._embed = embed
        self._hops = hops
        self._similarity = similarity
        self._max_node_chunks = max_node_chunks
        self._keys: list[str] = []
        self._vectors: Vectors | None = None

    def link(self, question: str) -> dict[str, float]:
        """Node key -> link strength in (0, 1] for the entities the question mentions."""
        nodes = self.graph.nodes
        grams = question_ngrams(question)
        linked: dict[str, float] = {}
        for gram in grams:
            key = normalise_entity_name(gram)
            if key in nodes and key not in ENGLISH_STOPWORDS:
                linked[key] = 1.0
        if self._embed is not None and nodes:
            unmatched = [g for g in grams if normalise_entity_name(g) not in linked][:_MAX_EMBEDDED_NGRAMS]
            for key, score in self._similar(unmatched).items():
                linked[key] = max(linked.get(key, 0.0), score)
        return linked

    def _similar(self, grams: Sequence[str]) -> dict[str, float]:
        if not grams or self._embed is None:
            return {}
        if self._vectors is None:
            self._keys = sorted(self.graph.nodes)
            names = [self.graph.nodes[k].name for k in self._keys]
            self._vectors = np.asarray(self._embed(names), dtype=np.float32)
        if not len(self._keys):
            return {}
        sims = np.asarray(self._embed(list(grams)), dtype=np.float32) @ self._vectors.T
        best = sims.max(axis=0)
        return {self._keys[i]: float(best[i]) for i in np.flatnonzero(best >= self._similarity)}

    def rank(self, question: str, limit: int, closeness: Closeness | None = None) -> list[tuple[str, float]]:
        """Up to `limit` chunks that mention a linked node or a neighbour of one.

        Graph evidence picks the pool: nodes closer to the question, more strongly linked and more
        specific (mentioned by fewer chunks) weigh more. `closeness` (cosine with the question) then
        orders the pool, because an entity link says which chunks are related, not which of them
        answers: every chunk of an article mentions its subject, so in graph order they tie and the
        top of the list is arbitrary. Scores are the closeness when given, else the graph weight.
        """
        linked = self.link(question)
        if not linked or limit <= 0:
            return []
        distance = self.graph.neighbourhood(linked, self._hops)
        nodes = self.graph.nodes
        scores: dict[str, float] = {}
        for key, hops in distance.items():
            node = nodes[key]
            if len(node.chunk_ids) > self._max_node_chunks:
                continue  # a hub ("data", "system") says nothing about any one chunk
            weight = linked.get(key, 0.5) / (1 + hops) / np.log2(1 + len(node.chunk_ids))
            for cid in node.chunk_ids:
                scores[cid] = scores.get(cid, 0.0) + float(weight)
        pool = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[: max(limit, _POOL)]
        if closeness is not None:
            close = closeness([cid for cid, _ in pool])
            # Stable sort: equally close chunks keep their graph order.
            pool = sorted(((cid, close[cid]) for cid, _ in pool if cid in close), key=lambda item: -item[1])
        return pool[:limit]


class GraphRetriever:
    """Leaf retriever over an index snapshot: the ranker's chunks that the manifest lists, as
    candidates with origin "graph". Scores are cosines with the query vector (graph weights when the
    query has none): graph evidence picks the pool, closeness to the question orders it."""

    def __init__(
        self, ranker: GraphRanker, table: VectorTableReader, live: frozenset[str] | None, *, limit: int
    ) -> None:
        """`live`: the listed chunk ids, or None when every row of `table` is listed (see
        raggity.retrieval.ranked.committed_pairs)."""
        self._ranker = ranker
        self._table = table
        self._live = live
        self._limit = limit

    def retrieve(self, query: Query) -> list[Candidate]:
        vector = query.vector
        closeness = None if vector is None else (lambda ids: self._table.cosines(vector, ids))
        pairs = self._ranker.rank(query.text, self._limit, closeness)
        live = committed_pairs(pairs, self._table, self._live, len(pairs))
        return ranked_candidates(live, self._table, origin="graph", ranked_by="graph")
