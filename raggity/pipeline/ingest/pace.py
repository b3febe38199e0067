"""How long an ingest has left, from the work left rather than from files counted.

Embedding dominates an ingest, so time left is chunks left over the embedding rate. Chunks left are
not known until every file is read, so they are estimated from the bytes still to read at the
chunks-per-byte rate of the files read so far: HTML yields far fewer chunks per byte than plain text,
and the estimate learns the mix of the folder at hand as reading runs ahead of embedding.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IngestPace:
    bytes_total: int
    bytes_read: int = 0
    chunks_read: int = 0
    chunks_embedded: int = 0
    seconds: float = 0.0

    @property
    def chunks_expected(self) -> int | None:
        """Chunks this ingest will embed in all; None before any file with text was read."""
        if self.bytes_total <= 0:
            return self.chunks_read  # nothing planned to read: no more will come
        if self.bytes_read <= 0 or self.chunks_read <= 0:
            return None
        left = max(self.bytes_total - self.bytes_read, 0)
        return self.chunks_read + round(left * self.chunks_read / self.bytes_read)

    @property
    def grounded(self) -> bool:
        """Whether the files read to their end gave every chunk embedded so far. Batches are embedded
        as they fill, while a file is still being read, and a file counts as read only at its end: a
        file bigger than a batch is unknown to the rate until then. On Sphinx's documentation, two
        small files and the first 500 chunks of changes.html predicted 9,380 chunks; 2,362 came."""
        return self.chunks_read >= self.chunks_embedded

    @property
    def chunks_per_second(self) -> float | None:
        return self.chunks_embedded / self.seconds if self.chunks_embedded and self.seconds > 0 else None

    @property
    def seconds_left(self) -> float | None:
        """None until both the amount of work and the embedding rate are known."""
        expected, rate = self.chunks_expected, self.chunks_per_second
        if expected is None or rate is None:
            return None
        return max(expected - self.chunks_embedded, 0) / rate
