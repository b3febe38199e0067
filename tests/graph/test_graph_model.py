"""Pure tests of the graph value: name normalisation, merging, removal, BFS and JSON."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from raggity.core.errors import IndexStateError
from raggity.retrieval.graph_model import (
    Entity,
    Extraction,
    Graph,
    Relation,
    load_graph,
    normalise_entity_name,
    save_graph,
)
from raggity.retrieval.graph_retriever import GraphRanker, question_ngrams


@pytest.mark.parametrize(
    ("variant", "key"),
    [
        ("Dogs", "dog"),
        ("dog", "dog"),
        ("The Dogs", "dog"),
        ("  the   DOGS ", "dog"),
        ("A.I.", "ai"),
        ("AI", "ai"),
        ("an A.I.", "ai"),
        ("U.S. Army", "us army"),
        ("US  army", "us army"),
        ("Jupiter's", "jupiter"),
        ("Companies", "company"),
        ("Boxes", "box"),
        ("glass", "glass"),
        ("Bus", "bus"),
        ("Galileo Galilei", "galileo galilei"),
        ("Galileo-Galilei", "galileo galilei"),
        ("O'Brien", "obrien"),
    ],
)
def test_normalise_merges_variants(variant: str, key: str) -> None:
    assert normalise_entity_name(variant) == key


def test_variants_become_one_node_with_the_most_common_spelling() -> None:
    graph = Graph()
    graph.add("c1", Extraction((Entity("Dogs", "concept"),)))
    graph.add("c2", Extraction((Entity("the dog", "concept"),)))
    graph.add("c3", Extraction((Entity("Dogs", "other"),)))
    assert list(graph.nodes) == ["dog"]
    node = graph.nodes["dog"]
    assert node.name == "Dogs"
    assert node.chunk_ids == {"c1", "c2", "c3"}


def _chain() -> Graph:
    graph = Graph()
    graph.add("c1", Extraction((Entity("Acme", "organization"),), (Relation("Acme", "hired", "Bo Li"),)))
    graph.add("c2", Extraction((Entity("Bo Li", "person"),), (Relation("Bo Li", "lives in", "Oslo"),)))
    graph.add("c3", Extraction((Entity("Oslo", "place"),)))
    return graph


def test_neighbourhood_is_breadth_first_both_directions() -> None:
    graph = _chain()
    assert graph.neighbourhood(["acme"], 0) == {"acme": 0}
    assert graph.neighbourhood(["acme"], 1) == {"acme": 0, "bo li": 1}
    assert graph.neighbourhood(["oslo"], 2) == {"oslo": 0, "bo li": 1, "acme": 2}
    assert graph.neighbourhood(["unknown"], 3) == {}


def test_removing_chunks_drops_their_mentions_and_edges() -> None:
    graph = _chain()
    assert len(graph.edges) == 2
    assert graph.remove_chunks(["c2", "missing"]) == 1
    assert ("bo li", "lives in", "oslo") not in graph.edges
    assert graph.nodes["bo li"].chunk_ids == {"c1"}  # still the object of c1's relation
    assert graph.nodes["oslo"].chunk_ids == {"c3"}
    graph.remove_chunks(["c3"])
    assert "oslo" not in graph.nodes


def test_json_round_trip(tmp_path: Path) -> None:
    graph = _chain()
    graph.generator = "model-x"
    path = tmp_path / "graph.json"
    save_graph(graph, path)
    loaded = load_graph(path)
    assert loaded.extractions == graph.extractions
    assert loaded.generator == "model-x"
    assert loaded.nodes == graph.nodes
    assert load_graph(tmp_path / "absent.json").extractions == {}


def test_retriever_links_names_and_expands_hops() -> None:
    retriever = GraphRanker(_chain(), hops=1)
    assert retriever.link("Who did ACME hire?") == {"acme": 1.0}
    ids = [cid for cid, _ in retriever.rank("Who did ACME hire?", 10)]
    assert ids[0] == "c1"
    assert "c2" in ids
    assert "c3" not in ids  # two hops away
    assert retriever.rank("nothing relevant here", 10) == []


def test_question_ngrams_skip_stopword_edges() -> None:
    grams = question_ngrams("Where was the U.S. Army founded?")
    assert "us army" in grams
    assert "where" not in grams
    assert "the us army" not in grams


def test_closeness_orders_the_graph_pool_and_drops_chunks_without_a_vector() -> None:
    retriever = GraphRanker(_chain(), hops=1)
    by_graph = [cid for cid, _ in retriever.rank("Who did ACME hire?", 10)]
    assert by_graph[:2] == ["c1", "c2"]
    close = {"c1": 0.2, "c2": 0.7}
    asked: list[list[str]] = []

    def closeness(ids: Sequence[str]) -> dict[str, float]:
        asked.append(list(ids))
        return {cid: close[cid] for cid in ids if cid in close}

    hits = retriever.rank("Who did ACME hire?", 10, closeness)
    assert asked == [by_graph]  # the pool is what graph evidence found
    assert hits == [("c2", 0.7), ("c1", 0.2)]
    # Equal closeness keeps graph order.
    close = {"c1": 0.5, "c2": 0.5}
    assert [cid for cid, _ in retriever.rank("Who did ACME hire?", 10, closeness)] == ["c1", "c2"]


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        '{"format_version": 1, "chunks": []}',
        '{"format_version": 1, "chunks": {"c1": []}}',
        '{"format_version": 1, "chunks": {"c1": {"entities": [5]}}}',
    ],
)
def test_a_graph_of_the_wrong_shape_is_damaged(tmp_path: Path, text: str) -> None:
    """Valid JSON of another shape raised AttributeError from search and ingest: exit 70."""
    path = tmp_path / "graph.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(IndexStateError, match="entity graph is damaged"):
        load_graph(path)
