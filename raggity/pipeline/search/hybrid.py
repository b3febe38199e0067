"""Hybrid retrieval for one question: plan the queries, run every leaf retriever on each, fuse all
lists by RRF, then run the candidate stages (question cosine, rerank, dedup).

To add a retrieval stage: write it as a function in raggity/retrieval/ (one module per stage) and
add it, wrapped as a `CandidateStage`, to `HybridRetriever._stages`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Literal

import numpy as np

from raggity.core.protocols import Retriever, Scorer
from raggity.core.trace import CandidateStage, Staged, TraceRecorder, passed
from raggity.core.types import Candidate, Query
from raggity.retrieval.bm25 import Bm25Retriever, KeywordIndex
from raggity.retrieval.dedup import dedup_keeping_terms, words
from raggity.retrieval.dense import DenseRetriever
from raggity.retrieval.fusion import reciprocal_rank_fusion
from raggity.retrieval.rerank import rerank
from raggity.store.bm25_index import Bm25Reader, lexical_query_text
from raggity.store.layout import IndexLayout
from raggity.store.manifest import (
    Fingerprint,
    Header,
    HeaderCache,
    Manifest,
    check_local_records,
    local_records,
)
from raggity.store.vector_table import VectorTableReader

Mode = Literal["hybrid", "dense", "bm25"]
# The queries to run for one query: the query itself (embedded), plus any generated ones.
QueryPlan = Callable[[Query], list[Query]]
# The graph's leaf retriever over a snapshot, returning at most `limit` candidates (None: no graph).
GraphLeaf = Callable[["IndexSnapshot", int], Retriever | None]


@dataclass(frozen=True)
class SearchOptions:
    candidates: int = 30
    rrf_k: int = 60
    mode: Mode = "hybrid"
    dedup_cosine: float = 0.92
    # Only files whose path matches this glob (see path_matches); None: every file.
    path_glob: str | None = None


def path_matches(source: str, glob: str) -> bool:
    """Whether `glob` matches the whole path or its end: "*.md", "docs/*", "guide/install.md".
    As in fnmatch, `*` also crosses folder separators."""
    return fnmatch.fnmatchcase(source, glob) or fnmatch.fnmatchcase(source, f"*/{glob}")


class IndexSnapshot:
    """Readers over the index as of the last committed manifest; reopened when it changes.

    When the manifest names a version of the chunk table that holds exactly its chunks
    (store/manifest.py, `Header.chunk_version`: what every completed ingest writes), the table is
    opened at that version and no chunk id is read: rows written after it are not in it, and a
    keyword hit (Tantivy has no versions) counts only when that version has its row, a lookup of the
    hits' ids. Otherwise (an index written before, or a save in the middle of an ingest) the
    records are read and every list keeps the ids they list, as before; at a million chunks that
    read took about a second and 220 MB. The records themselves (`manifest`, `live`) are read on
    first use: a search needs them only for a path glob, an answer for its freshness check.
    """

    def __init__(self, layout: IndexLayout) -> None:
        self._layout = layout
        self._headers = HeaderCache(layout.manifest)
        # Opened once, here, at the manifest of now: the first query's refresh finds it unchanged
        # (the readers were opened twice in a cold search, ~0.05 s of Lance and Tantivy).
        self._open(self._headers.current())

    def refresh(self) -> None:
        header = self._headers.current()
        if header is not self._header:
            self._open(header)

    def _open(self, header: Header) -> None:
        self._header = header
        self._records: Manifest | None = None
        self._live: frozenset[str] | None = None
        self._by_source: dict[str, frozenset[str]] | None = None
        self.bm25: KeywordIndex = Bm25Reader(self._layout.tantivy)
        exact = self._exact_table(header)
        self.table = exact or VectorTableReader(self._layout.table)
        # None: every row of the table is listed; else the listed ids, which every list keeps.
        self.filter: frozenset[str] | None = None if exact else self.live
        # The keyword index's documents no listed chunk has (an interrupted ingest's): over-fetched.
        self.keyword_slack = max(self._documents() - header.chunks, 0)

    def _exact_table(self, header: Header) -> VectorTableReader | None:
        """The table at the version the manifest names as holding exactly its chunks, or None."""
        if header.chunk_version is None:
            return None
        try:
            table = VectorTableReader(self._layout.table, version=header.chunk_version)
        except LookupError:  # a cleanup removed it: filter by the records instead
            return None
        # A count off (a copied or damaged folder) is no proof that its rows are the listed ones.
        if table.rows != header.chunks:
            return None
        # Lost records are the damaged-index line here too, though a search would not read them.
        check_local_records(header, self._layout.manifest)
        return table

    def _documents(self) -> int:
        return self.bm25.documents if isinstance(self.bm25, Bm25Reader) else self.table.rows

    def _read_records(self, header: Header) -> Manifest:
        return local_records(header, self._layout.manifest)

    @property
    def fingerprint(self) -> Fingerprint | None:
        """The settings the index was built with, from the manifest's document alone."""
        return self._header.manifest.fingerprint

    @property
    def manifest(self) -> Manifest:
        """The manifest the readers were opened at, records included: what each file was when it was
        indexed (read on first use)."""
        if self._records is None:
            self._records = self._read_records(self._header)
        return self._records

    @property
    def live(self) -> frozenset[str]:
        """Every chunk id the manifest lists (read on first use)."""
        if self._live is None:
            self._live = frozenset(self.manifest.live_ids())
        return self._live

    def live_matching(self, glob: str | None) -> frozenset[str] | None:
        """The ids a list keeps: the live chunk ids, or only those of files whose path matches
        `glob`; None for every row of the table (see `filter`)."""
        if glob is None:
            return self.filter
        if self._by_source is None:
            self._by_source = {source: frozenset(e.chunk_ids) for source, e in self.manifest.sources.items()}
        return frozenset().union(
            *(ids for source, ids in self._by_source.items() if path_matches(source, glob))
        )

    def leaves(self, mode: Mode, limit: int, live: frozenset[str] | None) -> list[tuple[str, Retriever]]:
        """The text retrievers for `mode` over the chunks in `live` (None: every row of the table),
        each named as its trace stage."""
        found: list[tuple[str, Retriever]] = []
        if mode != "bm25":
            found.append(("dense", DenseRetriever(self.table, live, limit=limit)))
        if mode != "dense":
            slack = self.keyword_slack if live is None else max(self._documents() - len(live), 0)
            found.append(("bm25", Bm25Retriever(self.bm25, self.table, live, slack=slack, limit=limit)))
        return found


class HybridRetriever:
    """The composite retriever behind `rag search` and `rag ask`.

    For a query: `plan` gives the queries to run (the question, embedded, plus any generated ones);
    every text retriever runs on each of them; all lists are fused by reciprocal rank fusion (k =
    options.rrf_k). The graph leaf, when `graph` gives one for the refreshed snapshot, runs on the
    first query and only adds chunks the text retrievers missed. Then each candidate gets its cosine
    with the question, the scorer (if any) reranks, and near-duplicates go. Scores are RRF scores,
    or rerank scores in [0, 1] after a rerank. Every step is recorded in `trace`.
    """

    def __init__(
        self,
        snapshot: IndexSnapshot,
        options: SearchOptions,
        *,
        plan: QueryPlan,
        trace: TraceRecorder,
        scorer: Scorer | None = None,
        graph: GraphLeaf | None = None,
    ) -> None:
        self._snapshot = snapshot
        self._options = options
        self._plan = plan
        self._trace = trace
        self._scorer = scorer
        self._graph = graph

    def retrieve(self, query: Query) -> list[Candidate]:
        self._snapshot.refresh()
        queries = self._plan(query)
        live = self._snapshot.live_matching(self._options.path_glob)
        lists: list[list[Candidate]] = []
        for name, leaf in self._snapshot.leaves(self._options.mode, self._options.candidates, live):
            found: list[list[Candidate]] = self._trace.run(
                name, len(queries), partial(_leaf_lists, name, leaf, queries)
            )
            lists += found
        graph: list[Candidate] = []
        if self._graph is not None:
            graph = self._trace.run("graph", len(queries), partial(self._graph_list, queries[0], lists, live))
        fused = self._trace.run(
            "fusion", sum(len(x) for x in lists), partial(fuse, lists, graph, self._options.rrf_k)
        )
        return self._trace.run_stages(self._stages(queries, query.text), fused)

    def _graph_list(
        self, query: Query, lists: Sequence[list[Candidate]], live: frozenset[str] | None
    ) -> Staged[list[Candidate]]:
        leaf = self._graph(self._snapshot, self._options.candidates) if self._graph is not None else None
        if leaf is None:
            return Staged([], 0)
        # The leaf keeps the snapshot's listed chunks; a path glob narrows them further.
        found = [c for c in leaf.retrieve(query) if live is None or c.chunk.id in live]
        seen = {c.chunk.id for ranked in lists for c in ranked}
        return Staged(found, len(found), {"added": sum(c.chunk.id not in seen for c in found)})

    def _stages(self, queries: Sequence[Query], question: str) -> list[tuple[str, CandidateStage]]:
        table, opts = self._snapshot.table, self._options
        return [
            ("hydrate", lambda found: passed(with_question_cosine(found, queries, table))),
            ("rerank", lambda found: rerank_stage(question, found, self._scorer)),
            ("dedup", lambda found: dedup_stage(found, table, opts.dedup_cosine, question)),
            *([("query-lists", partial(query_lists_stage, queries))] if len(queries) > 1 else []),
        ]


def _leaf_lists(name: str, leaf: Retriever, queries: Sequence[Query]) -> Staged[list[list[Candidate]]]:
    lists = [leaf.retrieve(q) for q in queries]
    sizes = {f"{name}:{q.label}": len(found) for q, found in zip(queries, lists, strict=True) if found}
    return Staged([found for found in lists if found], sum(sizes.values()), {"lists": sizes})


def fuse(
    lists: Sequence[Sequence[Candidate]], supplementary: Sequence[Candidate], k: int
) -> Staged[list[Candidate]]:
    """RRF over `lists`; the supplementary (graph) list only adds chunks that no list holds.

    Letting the graph vote on chunks dense and BM25 already ranked lifted same-topic chunks over the
    answer (SQuAD recall@5 0.957 -> 0.930); chunks it shares with them still show it in their origins.
    """
    rankings = [[c.chunk.id for c in ranked] for ranked in lists]
    seen = {cid for ranking in rankings for cid in ranking}
    rankings.append([c.chunk.id for c in supplementary if c.chunk.id not in seen])
    fused = reciprocal_rank_fusion(rankings, k=k)
    return passed(merge_lists(fused, [*lists, supplementary]), k=k)


def merged_origins(lists: Sequence[Sequence[Candidate]]) -> dict[str, tuple[str, ...]]:
    """For each chunk id, the names of every list that holds it, in list order, each once: a chunk
    found by several queries or retrievers keeps where each copy came from."""
    origins: dict[str, dict[str, None]] = {}
    for ranked in lists:
        for c in ranked:
            origins.setdefault(c.chunk.id, {}).update(dict.fromkeys(c.origins))
    return {cid: tuple(names) for cid, names in origins.items()}


def merge_lists(fused: Sequence[tuple[str, float]], lists: Sequence[Sequence[Candidate]]) -> list[Candidate]:
    """One candidate per fused id, scored by fusion: its best rank in any dense and any BM25 list,
    and the names of every list that holds it, in list order."""
    first: dict[str, Candidate] = {}
    origins = merged_origins(lists)
    dense: dict[str, int] = {}
    bm25: dict[str, int] = {}
    for ranked in lists:
        for c in ranked:
            cid = c.chunk.id
            first.setdefault(cid, c)
            if c.dense_rank is not None:
                dense[cid] = min(dense.get(cid, c.dense_rank), c.dense_rank)
            if c.bm25_rank is not None:
                bm25[cid] = min(bm25.get(cid, c.bm25_rank), c.bm25_rank)
    return [
        Candidate(
            chunk=first[cid].chunk,
            score=score,
            rrf_score=score,
            dense_rank=dense.get(cid),
            bm25_rank=bm25.get(cid),
            origins=origins[cid],
        )
        for cid, score in fused
    ]


def with_question_cosine(
    candidates: list[Candidate], queries: Sequence[Query], table: VectorTableReader
) -> list[Candidate]:
    """Each candidate's best cosine with the question's own vector(s).

    dense_cosine feeds abstention, which was calibrated on the user's own question: a HyDE passage
    or a rephrasing written by the model must not lift a question over the floor.
    """
    own = [q.vector for q in queries if q.label == "question" and q.vector is not None]
    vectors = own or [q.vector for q in queries if q.vector is not None]
    stored = table.fetch([c.chunk.id for c in candidates])
    return [
        replace(c, dense_cosine=max((float(v @ stored[c.chunk.id].vector) for v in vectors), default=None))
        for c in candidates
    ]


def rerank_stage(
    question: str, candidates: list[Candidate], scorer: Scorer | None
) -> Staged[list[Candidate]]:
    if scorer is None or not candidates:
        reason = "reranker off or not installed" if scorer is None else "no candidates"
        return passed(candidates, skipped=reason)
    return passed(rerank(question, candidates, scorer))


def dedup_stage(
    candidates: list[Candidate], table: VectorTableReader, threshold: float, question: str = ""
) -> Staged[list[Candidate]]:
    if not candidates:
        return passed(candidates, cosine=threshold)
    stored = table.fetch([c.chunk.id for c in candidates])
    vectors = np.stack([stored[c.chunk.id].vector for c in candidates])
    # A near-duplicate that holds a question word the better one lacks is kept (retrieval/dedup.py).
    texts = [c.chunk.text for c in candidates]
    kept = dedup_keeping_terms(vectors, texts, words(lexical_query_text(question)), threshold)
    return passed([candidates[i] for i in kept], cosine=threshold)


def query_lists_stage(queries: Sequence[Query], found: list[Candidate]) -> Staged[list[Candidate]]:
    """Passes candidates through, recording which query produced which text and how many surviving
    candidates each list contributed (alone or shared)."""
    contributed: dict[str, int] = {}
    only: dict[str, int] = {}
    for candidate in found:
        for name in candidate.origins:
            contributed[name] = contributed.get(name, 0) + 1
        if len(candidate.origins) == 1:
            only[candidate.origins[0]] = only.get(candidate.origins[0], 0) + 1
    return passed(
        found,
        queries={q.label: q.text for q in queries},
        candidates_by_list=contributed,
        only_from_list=only,
    )
