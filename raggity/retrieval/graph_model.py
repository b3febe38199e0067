"""The entity graph: what the LLM extracted from each chunk, and the nodes and edges derived from it.

The per-chunk extractions are the source of truth (and the only thing saved), so dropping a deleted
or changed chunk is exact: its mentions and relations disappear, and a node no chunk mentions any
more disappears with them. Nodes are keyed by `normalise_entity_name`, which merges spelling
variants ("Dogs", "dog", "the dog"; "A.I.", "AI").
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from raggity.core.atomic_file import atomic_write_text
from raggity.core.errors import IndexStateError

GRAPH_FORMAT = 1

_ARTICLES = ("the", "a", "an")
_APOSTROPHE = re.compile(r"(?<=\w)['’](?=\w)")
# Dots of acronyms: between letters ("A.I") or after a lone letter ("I." in "A.I.").
_DOTTED = re.compile(r"(?<=[^\W\d_])\.(?=[^\W\d_])|(?<=\b[^\W\d_])\.")
_POSSESSIVE = re.compile(r"['’]s\b")
_NON_WORD = re.compile(r"[\W_]+")
# Words ending in s that are not plurals of a word without it.
_NOT_PLURAL = ("ss", "us", "is", "ics")


@dataclass(frozen=True, slots=True)
class Entity:
    name: str
    type: str


@dataclass(frozen=True, slots=True)
class Relation:
    subject: str
    relation: str
    object: str


@dataclass(frozen=True, slots=True)
class Extraction:
    """What one chunk yielded. An empty extraction still marks the chunk as processed."""

    entities: tuple[Entity, ...] = ()
    relations: tuple[Relation, ...] = ()


@dataclass(frozen=True, slots=True)
class Node:
    key: str
    name: str
    type: str
    chunk_ids: frozenset[str]


@dataclass(frozen=True, slots=True)
class Edge:
    subject: str
    relation: str
    object: str
    chunk_ids: frozenset[str]


def singular(word: str) -> str:
    """A crude English singular: enough to merge "dogs" with "dog" and "companies" with "company"."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(_NOT_PLURAL):
        return word[:-1]
    return word


def name_tokens(text: str) -> list[str]:
    """Case-folded words with acronym dots, apostrophes and other punctuation removed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _POSSESSIVE.sub("", text)
    text = _APOSTROPHE.sub("", _DOTTED.sub("", text))
    return [t for t in _NON_WORD.split(text) if t]


def normalise_entity_name(name: str) -> str:
    """The node key of an entity name: "The Dogs" -> "dog", "A.I." -> "ai", "U.S.  Army" -> "us army"."""
    tokens = name_tokens(name)
    while len(tokens) > 1 and tokens[0] in _ARTICLES:
        tokens = tokens[1:]
    if tokens:
        tokens[-1] = singular(tokens[-1])
    return " ".join(tokens)


def grounded_text(text: str) -> str:
    """Chunk text in the same token form as keys (every word singularised), padded with spaces."""
    return " " + " ".join(singular(t) for t in name_tokens(text)) + " "


def is_grounded(key: str, grounded: str) -> bool:
    """True when the entity key occurs as whole words in `grounded` (from grounded_text)."""
    if not key:
        return False
    return " " + " ".join(singular(t) for t in key.split()) + " " in grounded


@dataclass
class Graph:
    """Mutable while a build runs; `nodes`, `edges` and adjacency are derived on demand and cached."""

    extractions: dict[str, Extraction] = field(default_factory=dict)
    generator: str = ""
    _nodes: dict[str, Node] | None = field(default=None, repr=False)
    _edges: dict[tuple[str, str, str], Edge] | None = field(default=None, repr=False)
    _adjacent: dict[str, set[str]] | None = field(default=None, repr=False)

    # -- updates ------------------------------------------------------------------------------
    def add(self, chunk_id: str, extraction: Extraction) -> None:
        self.extractions[chunk_id] = extraction
        self._invalidate()

    def remove_chunks(self, chunk_ids: Iterable[str]) -> int:
        removed = 0
        for cid in chunk_ids:
            if self.extractions.pop(cid, None) is not None:
                removed += 1
        if removed:
            self._invalidate()
        return removed

    def processed(self) -> set[str]:
        return set(self.extractions)

    def _invalidate(self) -> None:
        self._nodes = self._edges = self._adjacent = None

    # -- derived views ------------------------------------------------------------------------
    @property
    def nodes(self) -> dict[str, Node]:
        if self._nodes is None:
            self._derive()
        assert self._nodes is not None
        return self._nodes

    @property
    def edges(self) -> dict[tuple[str, str, str], Edge]:
        if self._edges is None:
            self._derive()
        assert self._edges is not None
        return self._edges

    def _derive(self) -> None:
        names: dict[str, Counter[str]] = {}
        types: dict[str, Counter[str]] = {}
        chunks: dict[str, set[str]] = {}
        edges: dict[tuple[str, str, str], set[str]] = {}

        def mention(key: str, name: str, kind: str, cid: str) -> None:
            names.setdefault(key, Counter())[name.strip()] += 1
            if kind:
                types.setdefault(key, Counter())[kind] += 1
            chunks.setdefault(key, set()).add(cid)

        for cid in sorted(self.extractions):
            extraction = self.extractions[cid]
            for entity in extraction.entities:
                key = normalise_entity_name(entity.name)
                if key:
                    mention(key, entity.name, entity.type, cid)
            for rel in extraction.relations:
                s, o = normalise_entity_name(rel.subject), normalise_entity_name(rel.object)
                verb = " ".join(name_tokens(rel.relation))
                if not s or not o or s == o or not verb:
                    continue
                mention(s, rel.subject, "", cid)
                mention(o, rel.object, "", cid)
                edges.setdefault((s, verb, o), set()).add(cid)
        self._nodes = {
            key: Node(
                key,
                names[key].most_common(1)[0][0],
                types[key].most_common(1)[0][0] if key in types else "",
                frozenset(ids),
            )
            for key, ids in chunks.items()
        }
        self._edges = {k: Edge(*k, frozenset(ids)) for k, ids in edges.items()}
        adjacent: dict[str, set[str]] = {}
        for s, _, o in edges:
            adjacent.setdefault(s, set()).add(o)
            adjacent.setdefault(o, set()).add(s)
        self._adjacent = adjacent

    def neighbourhood(self, keys: Iterable[str], hops: int) -> dict[str, int]:
        """Node key -> hop distance, breadth-first over relations (both directions) from `keys`."""
        if self._adjacent is None:
            self._derive()
        assert self._adjacent is not None
        nodes = self.nodes
        distance = {k: 0 for k in keys if k in nodes}
        queue = deque(distance)
        while queue:
            key = queue.popleft()
            if distance[key] >= hops:
                continue
            for other in sorted(self._adjacent.get(key, ())):
                if other not in distance:
                    distance[other] = distance[key] + 1
                    queue.append(other)
        return distance

    def relations_of(self, key: str) -> list[Edge]:
        return [e for e in self.edges.values() if key in (e.subject, e.object)]

    # -- JSON ---------------------------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps(
            {
                "format_version": GRAPH_FORMAT,
                "generator": self.generator,
                "chunks": {
                    cid: {
                        "entities": [[e.name, e.type] for e in x.entities],
                        "relations": [[r.subject, r.relation, r.object] for r in x.relations],
                    }
                    for cid, x in sorted(self.extractions.items())
                },
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> Graph:
        data = json.loads(text)
        # Valid JSON of another shape is as damaged as invalid JSON (TypeError, reported as such).
        if not isinstance(data, dict) or not isinstance(data.get("chunks"), dict):
            raise TypeError("not an entity graph")
        if not all(isinstance(x, dict) for x in data["chunks"].values()):
            raise TypeError("a chunk's extraction is not an object")
        if data.get("format_version") != GRAPH_FORMAT:
            raise ValueError(f"unknown graph format {data.get('format_version')!r}")
        chunks: Mapping[str, dict[str, list[list[str]]]] = data["chunks"]
        return cls(
            {
                cid: Extraction(
                    tuple(Entity(str(n), str(t)) for n, t in x.get("entities", [])),
                    tuple(Relation(str(s), str(r), str(o)) for s, r, o in x.get("relations", [])),
                )
                for cid, x in chunks.items()
            },
            str(data.get("generator", "")),
        )


def save_graph(graph: Graph, path: Path) -> None:
    atomic_write_text(path, graph.to_json())


def load_graph(path: Path) -> Graph:
    """An empty graph when the file does not exist; IndexStateError when it is damaged."""
    if not path.exists():
        return Graph()
    try:
        return Graph.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise IndexStateError(
            f"{path}: entity graph is damaged ({exc.__class__.__name__})",
            "delete it and run `rag graph-build`",
        ) from exc
