"""Builds the entity graph: one grammar-constrained LLM call per live chunk not yet extracted.

Incremental: chunks already in graph.json are skipped, chunks no longer in the manifest are
dropped. Resumable: progress is saved atomically every `save_every` chunks and when the build is
interrupted (Ctrl-C), so the next run continues where this one stopped.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from raggity.core.protocols import Generator
from raggity.core.quoting import neutralise
from raggity.core.types import Chunk
from raggity.retrieval.graph_model import (
    Entity,
    Extraction,
    Relation,
    grounded_text,
    is_grounded,
    load_graph,
    normalise_entity_name,
    save_graph,
)
from raggity.store.layout import IndexLayout
from raggity.store.local_index import LocalIndex
from raggity.store.manifest import load_manifest

# Small bounds keep replies short; string lengths are not constrained because length-bounded
# strings make llama.cpp grammars large and sampling slow. Parsing truncates long names instead.
MAX_ENTITIES = 6
MAX_RELATIONS = 4
MAX_NAME_CHARS = 48
ENTITY_TYPES = ("person", "organization", "place", "event", "date", "product", "concept", "other")

EXTRACTION_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "entities": {
            "type": "array",
            # Without a minimum, small models answer with empty lists.
            "minItems": 1,
            "maxItems": MAX_ENTITIES,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string", "enum": list(ENTITY_TYPES)},
                },
                "required": ["name", "type"],
            },
        },
        "relations": {
            "type": "array",
            "maxItems": MAX_RELATIONS,
            "items": {
                "type": "object",
                "properties": {
                    "subject": {"type": "string"},
                    "relation": {"type": "string"},
                    "object": {"type": "string"},
                },
                "required": ["subject", "relation", "object"],
            },
        },
    },
    "required": ["entities", "relations"],
}

_SYSTEM = (
    "You extract a knowledge graph from a text. List the named entities the text mentions "
    "(people, organizations, places, events, dates, products, key concepts), each with its exact "
    "name as written in the text, and the relations the text states between them, as "
    "subject / short verb phrase / object. Use only names that appear in the text. Answer in JSON."
)
_MAX_CHUNK_CHARS = 2400
_ENTITY_OBJECT = re.compile(r'\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"type"\s*:\s*"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class GraphBuildSettings:
    max_tokens: int = 256
    temperature: float = 0.0
    save_every: int = 8
    fetch_batch: int = 32


@dataclass(frozen=True)
class GraphBuildStatus:
    """Sent to the progress callback after every chunk (and once before the first)."""

    done: int
    total: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.done / self.seconds if self.seconds > 0 else 0.0

    @property
    def eta_seconds(self) -> float | None:
        return (self.total - self.done) / self.rate if self.rate > 0 else None


GraphProgress = Callable[[GraphBuildStatus], None]


@dataclass(frozen=True)
class GraphBuildReport:
    extracted: int
    unchanged: int
    removed: int
    unparsed: int
    seconds: float
    nodes: int
    edges: int
    graph: Path

    @property
    def seconds_per_chunk(self) -> float:
        return self.seconds / self.extracted if self.extracted else 0.0


# One worked example: a 0.5B model given only instructions returned empty lists for every chunk.
_EXAMPLE_TEXT = (
    "Text:\nMarie Curie worked at the University of Paris. In 1903 she shared the Nobel Prize in "
    "Physics with Pierre Curie."
)
_EXAMPLE_REPLY = (
    '{"entities": [{"name": "Marie Curie", "type": "person"}, {"name": "University of Paris", '
    '"type": "organization"}, {"name": "Nobel Prize in Physics", "type": "event"}, {"name": '
    '"Pierre Curie", "type": "person"}, {"name": "1903", "type": "date"}], "relations": [{"subject": '
    '"Marie Curie", "relation": "worked at", "object": "University of Paris"}, {"subject": "Marie Curie", '
    '"relation": "shared the Nobel Prize with", "object": "Pierre Curie"}]}'
)


def extraction_messages(chunk: Chunk) -> list[dict[str, str]]:
    # Neutralised as in the answer prompt: llama.cpp reads chat-template tokens in the prompt as
    # tokens, so a document holding "<|im_start|>system" would otherwise open a turn of its own.
    text = neutralise(chunk.search_text[:_MAX_CHUNK_CHARS])
    return [
        {"role": "system", "content": _SYSTEM},
        {"role": "user", "content": _EXAMPLE_TEXT},
        {"role": "assistant", "content": _EXAMPLE_REPLY},
        {"role": "user", "content": f"Text:\n{text}"},
    ]


def parse_extraction(raw: str, chunk_text: str) -> Extraction | None:
    """The extraction in `raw`, keeping only entities whose name occurs in the chunk; None if unparseable.

    Constrained decoding makes valid JSON the norm; a reply cut off by max_tokens still yields the
    entities that were complete.
    """
    try:
        data = json.loads(raw)
    except ValueError:
        found = _ENTITY_OBJECT.findall(raw)
        if not found:
            return None
        data = {"entities": [{"name": _unescape(n), "type": _unescape(t)} for n, t in found]}
    if not isinstance(data, dict):
        return None
    grounded = grounded_text(chunk_text)
    entities: dict[str, Entity] = {}
    for item in _dicts(data.get("entities")):
        name, kind = _text(item.get("name")), _text(item.get("type")).lower()
        key = normalise_entity_name(name)
        if key and key not in entities and is_grounded(key, grounded):
            entities[key] = Entity(name, kind if kind in ENTITY_TYPES else "other")
    relations: dict[tuple[str, str, str], Relation] = {}
    for item in _dicts(data.get("relations")):
        s, r, o = _text(item.get("subject")), _text(item.get("relation")), _text(item.get("object"))
        ks, ko = normalise_entity_name(s), normalise_entity_name(o)
        if r and ks and ko and ks != ko and is_grounded(ks, grounded) and is_grounded(ko, grounded):
            relations.setdefault((ks, r.lower(), ko), Relation(s, r, o))
    return Extraction(tuple(entities.values()), tuple(relations.values()))


def _unescape(value: str) -> str:
    try:
        return str(json.loads(f'"{value}"'))
    except ValueError:
        return value


def _dicts(value: object) -> list[dict[str, object]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _text(value: object) -> str:
    return " ".join(value.split())[:MAX_NAME_CHARS] if isinstance(value, str) else ""


def extract_chunk(
    generator: Generator, chunk: Chunk, settings: GraphBuildSettings = GraphBuildSettings()
) -> Extraction | None:
    raw = "".join(
        generator.stream(
            extraction_messages(chunk),
            max_tokens=settings.max_tokens,
            temperature=settings.temperature,
            json_schema=EXTRACTION_SCHEMA,
        )
    )
    return parse_extraction(raw, chunk.search_text)


def live_chunk_ids(layout: IndexLayout) -> list[str]:
    """Live chunk ids in a stable order: by source, then by position in the source."""
    manifest = load_manifest(layout.manifest)
    return [cid for src in sorted(manifest.sources) for cid in manifest.sources[src].chunk_ids]


def build_graph(
    layout: IndexLayout,
    generator: Callable[[], Generator],
    *,
    settings: GraphBuildSettings = GraphBuildSettings(),
    progress: GraphProgress | None = None,
    only: Sequence[str] | None = None,
) -> GraphBuildReport:
    """Brings graph.json up to date with the manifest. The caller holds the index's writer lock.

    `generator` is called only when some chunk needs extracting. `only` restricts extraction to
    those chunk ids (used for sampling in benchmarks); stale chunks are dropped either way.
    """
    started = time.perf_counter()
    graph = load_graph(layout.graph)
    live = live_chunk_ids(layout)
    live_set = set(live)
    removed = graph.remove_chunks([cid for cid in graph.processed() if cid not in live_set])
    wanted = live if only is None else [cid for cid in live if cid in set(only)]
    pending = [cid for cid in wanted if cid not in graph.extractions]
    unchanged = len(wanted) - len(pending)
    if removed:
        save_graph(graph, layout.graph)
    extracted = unparsed = 0
    if pending:
        model = generator()
        graph.generator = model.identity
        table = LocalIndex(layout).snapshot().table
        if progress is not None:
            progress(GraphBuildStatus(0, len(pending), 0.0))
        loop_start = time.perf_counter()
        since_save = 0
        try:
            for start in range(0, len(pending), settings.fetch_batch):
                batch = pending[start : start + settings.fetch_batch]
                stored = table.fetch(batch)
                for cid in batch:
                    row = stored.get(cid)
                    extraction = None if row is None else extract_chunk(model, row.chunk, settings)
                    if extraction is None:
                        unparsed += row is not None
                        extraction = Extraction()
                    graph.add(cid, extraction)
                    extracted += 1
                    since_save += 1
                    if since_save >= settings.save_every:
                        save_graph(graph, layout.graph)
                        since_save = 0
                    if progress is not None:
                        progress(GraphBuildStatus(extracted, len(pending), time.perf_counter() - loop_start))
        finally:
            if since_save:
                save_graph(graph, layout.graph)
    elif not layout.graph.exists():
        save_graph(graph, layout.graph)
    return GraphBuildReport(
        extracted,
        unchanged,
        removed,
        unparsed,
        time.perf_counter() - started,
        len(graph.nodes),
        len(graph.edges),
        layout.graph,
    )


@dataclass(frozen=True)
class GraphUpdate:
    """Brings an index's entity graph up to date; the generator is loaded only if needed."""

    generator: Callable[[], Generator]
    settings: GraphBuildSettings

    def run(self, layout: IndexLayout, progress: GraphProgress | None = None) -> GraphBuildReport:
        """The caller holds the index's writer lock."""
        return build_graph(layout, self.generator, settings=self.settings, progress=progress)
