"""Runs pipeline stages and records what each did: counts in and out, milliseconds, details.

Stage logic and trace bookkeeping live apart: a stage is a plain function that returns its result
wrapped in `Staged` (with whatever it wants the trace to say), and `TraceRecorder.run` times it and
records it. A new stage plugs into a sequence without touching the others or the recorder.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Generic, TypeVar

from raggity.core.types import Candidate, StageTrace

T = TypeVar("T")


@dataclass(frozen=True)
class Staged(Generic[T]):
    """A stage's result, how many items it passed on, and details for the trace."""

    value: T
    n_out: int
    detail: Mapping[str, object] = field(default_factory=dict)


# Told a stage's name and how many items it receives, as the stage starts.
OnStage = Callable[[str, int], None]

# The common shape of a retrieval or selection stage: ranked candidates in, ranked candidates out.
CandidateStage = Callable[[list[Candidate]], Staged[list[Candidate]]]


def passed(candidates: list[Candidate], /, **detail: object) -> Staged[list[Candidate]]:
    """A candidate stage's result: the list it passes on, with its length as n_out."""
    return Staged(candidates, len(candidates), detail)


class TraceRecorder:
    """The trace of one request: every stage that ran, in order, as frozen StageTrace values.

    Create one per question, when it is asked: `started` is that moment, so a stage can say how
    long the person has waited (the first answer text, counted from Enter). `--trace` and `--json`
    print its `stages`. `on_stage` is told each stage's name and input count as it starts (the
    terminal's status line shows it while nothing else is on screen).
    """

    def __init__(self, on_stage: OnStage | None = None) -> None:
        self._stages: list[StageTrace] = []
        self._on_stage = on_stage
        self.started = time.perf_counter()

    def run(self, name: str, n_in: int, step: Callable[[], Staged[T]]) -> T:
        """Runs `step`, records it as stage `name`, and returns its value."""
        if self._on_stage is not None:
            self._on_stage(name, n_in)
        start = time.perf_counter()
        result = step()
        ms = (time.perf_counter() - start) * 1000.0
        self._stages.append(StageTrace(name, round(ms, 3), n_in, result.n_out, dict(result.detail)))
        return result.value

    def run_stages(
        self, stages: Sequence[tuple[str, CandidateStage]], candidates: list[Candidate]
    ) -> list[Candidate]:
        """Runs candidate stages in order, each on the previous one's output."""
        for name, stage in stages:
            candidates = self.run(name, len(candidates), partial(stage, candidates))
        return candidates

    def add(self, trace: StageTrace) -> None:
        self._stages.append(trace)

    @property
    def stages(self) -> tuple[StageTrace, ...]:
        return tuple(self._stages)
