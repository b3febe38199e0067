"""On-disk cache of answers and query-transform outputs, one JSON file per entry, LRU-bounded.

Keys are SHA-256 digests of everything that changes the output. Answer keys cover each source the
model is shown (chunk id, location and text, after parent expansion), so a re-ingest that edits a
file the answer relied on, or moves its text, changes the key instead of serving a stale answer.

Every file is written with atomic_write_text, so two concurrent `rag ask` processes can share a cache:
readers see a whole entry or none, and a file that vanishes (evicted by the other process) is a miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raggity.core.atomic_file import atomic_write_text
from raggity.core.types import Answer, Chunk, Citation, Location
from raggity.pipeline.prompt import PROMPT_VERSION

if TYPE_CHECKING:
    from raggity.pipeline.ask import AskSettings

MAX_ENTRIES = 500
MAX_BYTES = 50_000_000
_SUFFIX = ".json"


def digest(*parts: object) -> str:
    """A stable key over JSON-serialisable parts (order matters)."""
    blob = json.dumps(list(parts), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class CacheStats:
    folder: str
    entries: int
    bytes: int


class CacheStore:
    """A folder of `<key>.json` files. Reading an entry touches it; writing evicts the oldest."""

    def __init__(self, folder: Path, *, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.folder = folder
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}{_SUFFIX}"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # least-recently-used eviction goes by mtime
        return data if isinstance(data, dict) else None

    def put(self, key: str, data: dict[str, Any]) -> None:
        try:
            atomic_write_text(self._path(key), json.dumps(data, ensure_ascii=False))
        except OSError:
            return  # a cache that cannot be written is only a slower cache
        self.evict()

    def _entries(self) -> list[tuple[float, int, Path]]:
        found = []
        try:
            paths = list(self.folder.glob(f"*{_SUFFIX}"))
        except OSError:
            return []
        for path in paths:
            with contextlib.suppress(OSError):
                st = path.stat()
                found.append((st.st_mtime, st.st_size, path))
        return found

    def evict(self) -> int:
        entries = sorted(self._entries(), key=lambda e: e[0])
        total = sum(size for _, size, _ in entries)
        removed = 0
        while entries and (len(entries) > self.max_entries or total > self.max_bytes):
            _, size, path = entries.pop(0)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
            total -= size
        return removed

    def stats(self) -> CacheStats:
        entries = self._entries()
        return CacheStats(str(self.folder), len(entries), sum(size for _, size, _ in entries))

    def clear(self) -> int:
        removed = 0
        for _, _, path in self._entries():
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
        return removed


@dataclass(frozen=True)
class AnswerCache:
    """Answers for one generator; `seed` is the generator's sampling seed."""

    store: CacheStore
    generator_identity: str
    seed: int

    def key(self, question: str, chunks: Sequence[Chunk], settings: AskSettings) -> str:
        """Keyed by exactly what the model would be shown: each source's id, where it sits (a cached
        answer's citations carry line ranges, which move when text is added above), and its text
        (with parent expansion, a neighbouring chunk's edit changes the passage, not the hit's id)."""
        sources = [
            [c.id, str(c.location), hashlib.sha256(c.text.encode("utf-8", "surrogatepass")).hexdigest()]
            for c in chunks
        ]
        return digest(
            "answer",
            question,
            sources,
            self.generator_identity,
            PROMPT_VERSION,
            {
                "max_tokens": settings.max_tokens,
                "temperature": settings.temperature,
                "seed": self.seed,
                "parent_document": settings.parent_document,
            },
        )

    def get(self, key: str) -> Answer | None:
        data = self.store.get(key)
        if data is None or data.get("kind") != "answer":
            return None
        try:
            return answer_from_json(data)
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, key: str, answer: Answer) -> None:
        self.store.put(key, answer_to_json(answer))


def answer_to_json(answer: Answer) -> dict[str, Any]:
    return {
        "kind": "answer",
        "question": answer.question,
        "text": answer.text,
        "abstained": answer.abstained,
        "citations": [
            {
                "n": c.n,
                "source": c.source,
                "location": [
                    c.location.line_start,
                    c.location.line_end,
                    c.location.page_start,
                    c.location.page_end,
                    c.location.anchor,
                ],
                "text": c.text,
                "supported": c.supported,
            }
            for c in answer.citations
        ],
        "unsupported_sentences": list(answer.unsupported_sentences),
    }


def answer_from_json(data: dict[str, Any]) -> Answer:
    """The cached answer, without a trace (the caller attaches the current one)."""
    citations = tuple(
        Citation(
            int(c["n"]),
            str(c["source"]),
            Location(*c["location"]),
            str(c["text"]),
            bool(c["supported"]),
        )
        for c in data["citations"]
    )
    return Answer(
        str(data["question"]),
        str(data["text"]),
        bool(data["abstained"]),
        citations,
        (),
        cached=True,
        unsupported_sentences=tuple(str(s) for s in data["unsupported_sentences"]),
    )
