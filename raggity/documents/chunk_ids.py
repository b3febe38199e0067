"""Content-derived chunk and parent ids that stay stable across runs and unrelated edits."""

from __future__ import annotations

import hashlib

_ID_HEX_CHARS = 20


def _digest(*parts: str) -> str:
    # surrogatepass: text read with surrogateescape may hold lone surrogates; they must hash, not raise.
    payload = "\0".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.sha256(payload).hexdigest()[:_ID_HEX_CHARS]


def chunk_id(source: str, text: str, occurrence: int) -> str:
    """Id of the `occurrence`-th (0-based) chunk with exactly this text in `source`.

    The position in the file is deliberately left out, so that inserting text elsewhere in the
    file does not change the id of a chunk whose text is unchanged.
    """
    return _digest(source, text, str(occurrence))


def parent_id(source: str, first_child_id: str) -> str:
    """Id of the parent group that starts with the child `first_child_id`."""
    return _digest(source, "parent", first_child_id)


class ChunkIdAllocator:
    """Hands out chunk ids for one file, numbering repeats of identical text in file order.

    Use one allocator for all segments (Documents) of a file, in order, so that two identical
    chunks in different segments still get distinct ids.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        # Keyed by a digest rather than the text so that a big file's chunk texts are not all kept alive.
        self._seen: dict[bytes, int] = {}

    def allocate(self, text: str) -> str:
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        occurrence = self._seen.get(key, 0)
        self._seen[key] = occurrence + 1
        return chunk_id(self.source, text, occurrence)
