"""Graph retrieval plumbing: a document linked to the question only through a shared entity is found
with graph retrieval and not without it. The graph is built with a fake generator (fixed entities per
chunk), so the test is deterministic and needs no language model."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from raggity.api.graph import graph_build
from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.core.trace import TraceRecorder
from raggity.core.types import Candidate, Query
from raggity.pipeline.graph.build import GraphBuildSettings, GraphBuildStatus, GraphUpdate
from raggity.pipeline.search.graph_source import MISSING_GRAPH
from raggity.pipeline.search.hybrid import HybridRetriever, IndexSnapshot, SearchOptions
from raggity.pipeline.search.query_plan import as_given
from raggity.retrieval.graph_model import load_graph
from raggity.testing import ScriptedGenerator
from tests.support import store_ids, write_config

QUESTION = "Who founded Zorblax Industries?"
DOCS = {
    "zorblax.txt": "Zorblax Industries was founded by Marta Quillfeather in a small workshop.",
    "goats.txt": "Marta Quillfeather keeps three goats on a hillside farm beside the fjord.",
    "founders.txt": "Many industries were founded by engineers who started companies in garages.",
    "startups.txt": "Who founds a company? Founders of industrial firms often start with a workshop.",
    "factory.txt": "Industrial founders built factories and workshops across the region.",
    "weather.txt": "Heavy rain fell on the coast, and the harbour closed for two days.",
}
# The fake extractor: entities per document, found by a phrase of its text.
ENTITIES = {
    "Zorblax Industries was": (
        [("Zorblax Industries", "organization"), ("Marta Quillfeather", "person")],
        [("Marta Quillfeather", "founded", "Zorblax Industries")],
    ),
    "keeps three goats": ([("Marta Quillfeather", "person"), ("fjord", "place")], []),
    "rain fell": ([("harbour", "place")], []),
}


def _extraction(messages: Sequence[dict[str, str]]) -> str:
    """The entity extraction this corpus calls for, by which document the prompt quotes."""
    text = messages[-1]["content"]
    entities, relations = next((v for k, v in ENTITIES.items() if k in text), ([], []))
    return json.dumps(
        {
            "entities": [{"name": n, "type": t} for n, t in entities],
            "relations": [{"subject": s, "relation": r, "object": o} for s, r, o in relations],
        }
    )


def FakeGenerator() -> ScriptedGenerator:  # noqa: N802 - reads as the double it builds
    return ScriptedGenerator(_extraction)


def _write_docs(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text + "\n")
    return docs


def _session(root: Path, graph: bool, generator: ScriptedGenerator | None = None) -> Raggity:
    config = write_config(root, retrieval={"rerank": False, "graph": graph, "graph_hops": 1, "candidates": 2})
    return Raggity(load_config(config), generator=generator)


def _sources(session: Raggity) -> list[str]:
    found = session.searcher.retrieve(QUESTION, TraceRecorder(), rerank=False)
    return [Path(c.chunk.source).name for c in found]


def test_shared_entity_brings_in_second_document(tmp_path: Path) -> None:
    docs = _write_docs(tmp_path)
    fake = FakeGenerator()
    plain = _session(tmp_path, graph=False, generator=fake)
    plain.ingest([docs])
    without = _sources(plain)
    assert "zorblax.txt" in without
    assert "goats.txt" not in without

    graph_build(plain.config, generator=fake)
    assert len(fake.calls) == len(DOCS)
    assert all(schema and schema["required"] == ["entities", "relations"] for schema in fake.schemas)
    assert "marta quillfeather" in load_graph(plain.layout.graph).nodes

    graphed = _session(tmp_path, graph=True)
    trace = TraceRecorder()
    found = graphed.searcher.retrieve(QUESTION, trace, rerank=False)
    by_source = {Path(c.chunk.source).name: c for c in found}
    assert "goats.txt" in by_source
    assert by_source["goats.txt"].origins == ("graph",)
    assert "graph" in by_source["zorblax.txt"].origins
    assert any(s.stage == "graph" and s.n_out >= 2 for s in trace.stages)

    # Nothing changed: a rerun sends nothing to the model.
    graph_build(plain.config, generator=fake)
    assert len(fake.calls) == len(DOCS)


def test_periodic_save_and_missing_graph_warning(tmp_path: Path) -> None:
    docs = _write_docs(tmp_path)
    warnings: list[str] = []
    config = load_config(write_config(tmp_path, retrieval={"rerank": False, "graph": True}))
    fake = FakeGenerator()
    plain = replace(config, retrieval=replace(config.retrieval, graph=False))
    Raggity(plain, generator=fake).ingest([docs])
    session = Raggity(config, generator=fake, warn=warnings.append)

    # graph = true but no graph.json: one warning, retrieval still answers.
    assert session.searcher.retrieve(QUESTION, TraceRecorder(), rerank=False)
    assert warnings == [MISSING_GRAPH]

    saved: list[int] = []

    def progress(status: GraphBuildStatus) -> None:
        if status.done:
            saved.append(len(load_graph(session.layout.graph).processed()))
        if status.done == 3:
            raise KeyboardInterrupt  # as a kill after the periodic save would leave it

    with pytest.raises(KeyboardInterrupt):
        GraphUpdate(lambda: fake, GraphBuildSettings(save_every=2)).run(session.layout, progress)
    assert saved == [0, 2, 2]  # saved after every 2 chunks, before the interrupt's final save
    assert len(load_graph(session.layout.graph).processed()) == 3


class ScriptedGraph:
    """A graph leaf that returns fixed chunks, whatever the query."""

    def __init__(self, snapshot: IndexSnapshot, ids: Sequence[str]) -> None:
        stored = snapshot.table.fetch(list(ids))
        self._found = [
            Candidate(stored[cid].chunk, 1.0 / (i + 1), origins=("graph",)) for i, cid in enumerate(ids)
        ]

    def retrieve(self, query: Query) -> list[Candidate]:
        return list(self._found)


def test_extra_list_adds_chunks_but_does_not_rerank_what_the_text_retrievers_found(tmp_path: Path) -> None:
    docs = _write_docs(tmp_path)
    session = _session(tmp_path, graph=False)
    session.ingest([docs])
    snapshot = IndexSnapshot(session.layout)
    options = SearchOptions(candidates=3)
    plan = as_given(session.models.embedder.embed, TraceRecorder())

    def search(graph: ScriptedGraph | None) -> list[Candidate]:
        hybrid = HybridRetriever(
            snapshot,
            options,
            plan=plan,
            trace=TraceRecorder(),
            graph=(lambda s, limit: graph) if graph else None,
        )
        return hybrid.retrieve(Query(QUESTION))

    plain = [c.chunk.id for c in search(None)]
    all_ids = store_ids(session.layout)
    unseen = sorted(all_ids - set(plain))[0]
    # Votes for the text retrievers' last chunk first, then a chunk they did not find.
    found = search(ScriptedGraph(snapshot, [plain[-1], unseen]))
    ids = [c.chunk.id for c in found]
    # The vote for plain[-1] did not lift it: the text retrievers' chunks keep their order.
    assert [cid for cid in ids if cid in plain] == plain
    assert sorted(ids) == sorted([*plain, unseen])  # and the chunk they missed was added
    origins = {c.chunk.id: c.origins for c in found}
    assert "graph" in origins[plain[-1]]  # what the graph also found is still marked
    assert origins[unseen] == ("graph",)
