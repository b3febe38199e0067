"""What an ingest tells its caller: progress as it runs, and the report at its end."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from raggity.core.errors import IngestIncompleteError
from raggity.documents.discover import SkippedFile


class IngestProgress(Protocol):
    def planned(self, files: int, sizes: Mapping[str, int]) -> None:
        """`files` to read, and their bytes by kind (see pace.kind_of; unchanged files are not counted)."""

    def advanced(self, files: int, chunks: int, tokens: int) -> None:
        """`chunks` embedded (with `tokens`), and `files` finished, since the last call."""

    def read(self, kind: str, size: int, chunks: int) -> None:
        """A file of `kind` and `size` bytes was read; `chunks` of its chunks are new and will be embedded."""

    def warn(self, source: str, reason: str) -> None: ...


class SilentProgress:
    def planned(self, files: int, sizes: Mapping[str, int]) -> None:
        pass

    def read(self, kind: str, size: int, chunks: int) -> None:
        pass

    def advanced(self, files: int, chunks: int, tokens: int) -> None:
        pass

    def warn(self, source: str, reason: str) -> None:
        pass


@dataclass(frozen=True)
class Skipped:
    source: str
    reason: str


@dataclass(frozen=True)
class IngestReport:
    added: int
    changed: int
    removed: int
    unchanged: int
    skipped: tuple[Skipped, ...]
    chunks_written: int
    tokens_embedded: int
    seconds: float
    embed_seconds: float
    rebuilt: bool
    repaired: int
    # Left out by a default rule (hidden, credentials, generated): reported, but not a failure.
    excluded: tuple[Skipped, ...] = ()


def finished(
    report: IngestReport, early: Sequence[Skipped], excluded: Sequence[SkippedFile], *, strict: bool
) -> IngestReport:
    """The report with the files skipped before indexing and those discovery excluded; under
    `strict`, any skipped file fails the ingest (after everything else was committed)."""
    report = replace(
        report,
        skipped=tuple(early) + report.skipped,
        excluded=tuple(Skipped(s.path, s.reason) for s in excluded),
    )
    if strict and report.skipped:
        raise IngestIncompleteError(
            f"{len(report.skipped)} file(s) skipped; index updated with everything else",
            "fix or exclude them, or run without --strict",
        )
    return report
