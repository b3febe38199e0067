"""How long an ingest has left, from the work left rather than from files counted.

Embedding dominates an ingest, so time left is chunks left over the embedding rate. Chunks left are
estimated from the bytes still to read at the chunks-per-byte rate of the files read so far, kind by
kind (file suffix): docs/ingestion.md, "Progress and time left", gives the figures (replayed with
`python -m bench.ingest_estimate FOLDER`) and why the announcement waits for a fifth of the bytes
(cli/progress.py). A kind not read yet takes the overall rate, so the announcement also waits until
every kind that holds a sizable share of the bytes (SAMPLED_SHARE) has been read: Office files,
e-books and notebooks are zip or JSON packages that give far fewer chunks per byte than text (on a
mixed folder of 200 generated Office files, notebooks, mail and e-books the announcement said 4,808
chunks; 2,836 came).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

# A kind with at least this share of the planned bytes must have been read before an estimate is
# announced (IngestPace.kinds_sampled).
SAMPLED_SHARE = 0.05


@dataclass(frozen=True)
class IngestPace:
    """Bytes planned and read, and chunks read, by kind of file; chunks embedded, and the seconds
    that took."""

    planned: Mapping[str, int] = field(default_factory=dict)
    bytes_read_by_kind: Mapping[str, int] = field(default_factory=dict)
    chunks_read_by_kind: Mapping[str, int] = field(default_factory=dict)
    chunks_embedded: int = 0
    seconds: float = 0.0

    def with_read(self, kind: str, size: int, chunks: int) -> IngestPace:
        return replace(
            self,
            bytes_read_by_kind=_added(self.bytes_read_by_kind, kind, size),
            chunks_read_by_kind=_added(self.chunks_read_by_kind, kind, chunks),
        )

    @property
    def bytes_total(self) -> int:
        return sum(self.planned.values())

    @property
    def bytes_read(self) -> int:
        return sum(self.bytes_read_by_kind.values())

    @property
    def chunks_read(self) -> int:
        return sum(self.chunks_read_by_kind.values())

    @property
    def chunks_expected(self) -> int | None:
        """Chunks this ingest will embed in all; None before any file with text was read."""
        if self.bytes_total <= 0:
            return self.chunks_read  # nothing planned to read: no more will come
        if self.bytes_read <= 0 or self.chunks_read <= 0:
            return None
        overall = self.chunks_read / self.bytes_read
        left = 0.0
        for kind, planned in self.planned.items():
            read = self.bytes_read_by_kind.get(kind, 0)
            rate = self.chunks_read_by_kind.get(kind, 0) / read if read else overall
            left += max(planned - read, 0) * rate
        return self.chunks_read + round(left)

    @property
    def kinds_sampled(self) -> bool:
        """Whether every kind holding SAMPLED_SHARE or more of the planned bytes has had a file read,
        so that no large part of the estimate rests on another kind's rate."""
        total = self.bytes_total
        return all(
            self.bytes_read_by_kind.get(kind, 0) > 0
            for kind, planned in self.planned.items()
            if planned >= SAMPLED_SHARE * total
        )

    @property
    def grounded(self) -> bool:
        """Whether the files read to their end gave every chunk embedded so far. Batches are embedded
        as they fill, while a file is still being read, and a file counts as read only at its end: a
        file bigger than a batch is unknown to the rate until then (docs/ingestion.md, Sphinx)."""
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


def _added(counts: Mapping[str, int], kind: str, n: int) -> dict[str, int]:
    return {**counts, kind: counts.get(kind, 0) + n}


def kind_of(source: str) -> str:
    """The kind a file's chunk rate is learnt for: its suffix, lower-cased ("" for none)."""
    name = source.rsplit("/", 1)[-1]
    stem, dot, suffix = name.rpartition(".")
    return f".{suffix.lower()}" if dot and stem else ""
