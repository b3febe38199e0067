"""The plan of one ingest, drawn against the manifest it starts from: which sources were removed,
which are unchanged, which are to be (re)read, and the rows that go stale."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from raggity.documents.chunker import ChunkingSettings
from raggity.pipeline.ingest.pace import kind_of
from raggity.pipeline.ingest.reading import safe_digest
from raggity.pipeline.ingest.sources import SourceFile
from raggity.store.index_seam import Fingerprint, Manifest, SourceEntry


def index_fingerprint(embedder_identity: str, chunking: ChunkingSettings) -> Fingerprint:
    """What an index's vectors and chunks depend on: a change to any of it forces a rebuild."""
    return Fingerprint(
        embedder_identity, chunking.chunk_tokens, chunking.parent_tokens, chunking.bm25_tokenizer
    )


def rebuilds(rebuild: bool, indexed: Fingerprint | None, current: Fingerprint) -> bool:
    """Whether an ingest empties the index and indexes every file again: asked to (`--rebuild`), or
    the index was built with other settings than `current`, which its vectors and chunks do not fit."""
    return rebuild or indexed not in (None, current)


@dataclass(frozen=True)
class Plan:
    todo: list[SourceFile]
    unchanged: int
    # Sources in scope that are gone, and their rows (deleted at the end of the run).
    removed: list[str]
    stale: set[str]

    def sizes(self) -> Counter[str]:
        """The bytes to read, by kind (the progress display's estimate)."""
        sizes: Counter[str] = Counter()
        for item in self.todo:
            sizes[kind_of(item.source)] += item.size
        return sizes


def plan_ingest(sources: Sequence[SourceFile], in_scope: Callable[[str], bool], manifest: Manifest) -> Plan:
    """The plan; `manifest` loses the removed sources and takes the new stamps of unchanged ones.
    Deletion is scoped by `in_scope`: other folders' files stay indexed. A source is unchanged with
    the size and mtime recorded, or with the same content (its entry then takes the new stamp)."""
    current = {s.source for s in sources}
    removed = [s for s in manifest.sources if in_scope(s) and s not in current]
    stale: set[str] = set()
    for source in removed:
        stale.update(manifest.sources.pop(source).chunk_ids)
    todo: list[SourceFile] = []
    unchanged = 0
    for item in sources:
        entry = manifest.sources.get(item.source)
        if (
            entry is not None
            and entry.mtime_ns
            and (entry.size, entry.mtime_ns) == (item.size, item.mtime_ns)
        ):
            unchanged += 1
        elif entry is not None and safe_digest(item) == entry.sha256:
            manifest.sources[item.source] = SourceEntry(
                entry.sha256, item.size, item.mtime_ns, entry.chunk_ids
            )
            unchanged += 1
        else:
            todo.append(item)
    return Plan(todo, unchanged, removed, stale)
