"""Hybrid retrieval for one question: lists per query, RRF, hydration, rerank, dedup."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from raggity.core.protocols import Retriever, Scorer
from raggity.core.trace import TraceRecorder
from raggity.core.types import Candidate, Hit, Query
from raggity.retrieval.dedup import dedup_indices
from raggity.retrieval.fusion import reciprocal_rank_fusion
from raggity.retrieval.rerank import rerank
from raggity.retrieval.retrievers import Bm25Retriever, DenseRetriever
from raggity.store.bm25_index import Bm25Reader
from raggity.store.layout import IndexLayout
from raggity.store.manifest import ManifestCache
from raggity.store.vector_table import VectorTableReader

Mode = Literal["hybrid", "dense", "bm25"]


@dataclass(frozen=True)
class SearchOptions:
    candidates: int = 30
    rrf_k: int = 60
    mode: Mode = "hybrid"
    dedup_cosine: float = 0.92


@dataclass(frozen=True)
class RankedList:
    """One retriever's answer to one query, kept for the trace."""

    name: str
    hits: tuple[Hit, ...]


# Cosine of a query vector with stored chunks, by chunk id (missing ids left out).
ChunkCosines = Callable[[Sequence[float], Sequence[str]], dict[str, float]]
# Extra candidates, e.g. graph retrieval: (question, queries, limit, cosines over this snapshot) ->
# RankedList or None. Only its chunks that no dense or BM25 list holds join fusion.
ExtraCandidates = Callable[[str, Sequence[Query], int, ChunkCosines], RankedList | None]


class IndexSnapshot:
    """Readers over the index as of the last committed manifest; reopened when it changes."""

    def __init__(self, layout: IndexLayout) -> None:
        self._layout = layout
        self._manifests = ManifestCache(layout.manifest)
        self._key: frozenset[str] | None = None
        self.table = VectorTableReader(layout.table)
        self.dense: Retriever = DenseRetriever(self.table, frozenset())
        self.bm25: Retriever = Bm25Retriever(Bm25Reader(layout.tantivy), frozenset(), 0)

    def refresh(self) -> None:
        _, live = self._manifests.current()
        if live is self._key:
            return
        self._key = live
        self.table = VectorTableReader(self._layout.table)
        self.dense = DenseRetriever(self.table, live)
        self.bm25 = Bm25Retriever(Bm25Reader(self._layout.tantivy), live, max(self.table.rows - len(live), 0))


class HybridSearch:
    def __init__(
        self,
        snapshot: IndexSnapshot,
        options: SearchOptions,
        scorer: Scorer | None,
        extra: ExtraCandidates | None = None,
    ) -> None:
        self._snapshot = snapshot
        self._options = options
        self._scorer = scorer
        self._extra = extra

    def run(self, question: str, queries: Sequence[Query], trace: TraceRecorder) -> list[Candidate]:
        self._snapshot.refresh()
        opts = self._options
        lists = self._ranked_lists(queries, trace)
        rankings = [[h.chunk_id for h in r.hits] for r in lists]
        if self._extra is not None:
            with trace.stage("graph", len(queries)) as rec:
                extra = self._extra(question, queries, opts.candidates, self._snapshot.table.cosines)
                if extra is not None:
                    # Extra lists only add what dense and BM25 missed. Letting the graph vote on
                    # chunks they already ranked lifted same-topic chunks over the answer (SQuAD
                    # recall@5 0.957 -> 0.930); the chunks it shares still show it in their origins.
                    found = {cid for ranking in rankings for cid in ranking}
                    rankings.append([h.chunk_id for h in extra.hits if h.chunk_id not in found])
                    lists.append(extra)
                    rec.detail["added"] = len(rankings[-1])
                rec.n_out = 0 if extra is None else len(extra.hits)
        with trace.stage("fusion", sum(len(r) for r in rankings)) as rec:
            fused = reciprocal_rank_fusion(rankings, k=opts.rrf_k)
            rec.n_out = len(fused)
            rec.detail["k"] = opts.rrf_k
        with trace.stage("hydrate", len(fused)) as rec:
            candidates, vectors = self._hydrate(fused, lists, queries)
            rec.n_out = len(candidates)
        candidates, vectors = self._rerank(question, candidates, vectors, trace)
        with trace.stage("dedup", len(candidates)) as rec:
            keep = dedup_indices(vectors, opts.dedup_cosine) if candidates else []
            candidates = [candidates[i] for i in keep]
            rec.n_out = len(candidates)
            rec.detail["cosine"] = opts.dedup_cosine
        return candidates

    def _ranked_lists(self, queries: Sequence[Query], trace: TraceRecorder) -> list[RankedList]:
        opts = self._options
        lists: list[RankedList] = []
        if opts.mode != "bm25":
            with trace.stage("dense", len(queries)) as rec:
                for q in queries:
                    if q.vector is not None:
                        lists.append(
                            RankedList(
                                f"dense:{q.label}", tuple(self._snapshot.dense.retrieve(q, opts.candidates))
                            )
                        )
                rec.n_out = sum(len(r.hits) for r in lists)
                rec.detail["lists"] = {r.name: len(r.hits) for r in lists}
        if opts.mode != "dense":
            lexical: list[RankedList] = []
            with trace.stage("bm25", len(queries)) as rec:
                for q in queries:
                    if q.lexical:
                        lexical.append(
                            RankedList(
                                f"bm25:{q.label}", tuple(self._snapshot.bm25.retrieve(q, opts.candidates))
                            )
                        )
                rec.n_out = sum(len(r.hits) for r in lexical)
                rec.detail["lists"] = {r.name: len(r.hits) for r in lexical}
            lists.extend(lexical)
        return lists

    def _hydrate(
        self, fused: list[tuple[str, float]], lists: list[RankedList], queries: Sequence[Query]
    ) -> tuple[list[Candidate], list[np.ndarray]]:
        stored = self._snapshot.table.fetch([cid for cid, _ in fused])
        # dense_cosine feeds abstention, which was calibrated on the user's own question: a HyDE
        # passage or a rephrasing written by the model must not lift a question over the floor.
        own = [q for q in queries if q.label == "question" and q.vector is not None]
        question_vectors = [
            np.asarray(q.vector, dtype=np.float32) for q in own or queries if q.vector is not None
        ]
        ranks: dict[str, dict[str, int]] = {}
        for ranked in lists:
            for rank, hit in enumerate(ranked.hits, start=1):
                ranks.setdefault(hit.chunk_id, {}).setdefault(ranked.name, rank)
        candidates, vectors = [], []
        for cid, score in fused:
            row = stored.get(cid)
            if row is None:  # deleted by a concurrent ingest after this snapshot's manifest
                continue
            seen = ranks.get(cid, {})
            cosine = max((float(v @ row.vector) for v in question_vectors), default=None)
            candidates.append(
                Candidate(
                    chunk=row.chunk,
                    score=score,
                    rrf_score=score,
                    dense_rank=min((r for n, r in seen.items() if n.startswith("dense:")), default=None),
                    bm25_rank=min((r for n, r in seen.items() if n.startswith("bm25:")), default=None),
                    dense_cosine=cosine,
                    origins=tuple(seen),
                )
            )
            vectors.append(row.vector)
        return candidates, vectors

    def _rerank(
        self, question: str, candidates: list[Candidate], vectors: list[np.ndarray], trace: TraceRecorder
    ) -> tuple[list[Candidate], list[np.ndarray]]:
        with trace.stage("rerank", len(candidates)) as rec:
            rec.n_out = len(candidates)
            if self._scorer is None or not candidates:
                rec.detail["skipped"] = (
                    "reranker off or not installed" if self._scorer is None else "no candidates"
                )
                return candidates, vectors
            by_id = {c.chunk.id: v for c, v in zip(candidates, vectors, strict=True)}
            ranked = rerank(question, candidates, self._scorer)
            return ranked, [by_id[c.chunk.id] for c in ranked]
