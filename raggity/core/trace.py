"""Records what each pipeline stage did and how long it took."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from raggity.core.types import StageTrace


@dataclass
class StageRecord:
    """Filled in by the stage while it runs; frozen into a StageTrace when it ends."""

    n_out: int = 0
    detail: dict[str, object] = field(default_factory=dict)


class TraceRecorder:
    def __init__(self) -> None:
        self._stages: list[StageTrace] = []

    @contextmanager
    def stage(self, name: str, n_in: int) -> Iterator[StageRecord]:
        record = StageRecord()
        start = time.perf_counter()
        yield record
        ms = (time.perf_counter() - start) * 1000.0
        self._stages.append(StageTrace(name, round(ms, 3), n_in, record.n_out, dict(record.detail)))

    def add(self, trace: StageTrace) -> None:
        self._stages.append(trace)

    @property
    def stages(self) -> tuple[StageTrace, ...]:
        return tuple(self._stages)
