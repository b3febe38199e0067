"""The answerability calibration's principle, as a function of collected signals.

Each question asked during calibration leaves three signals: the best dense cosine of its candidates,
the coverage of its best source, and the model's refusal probability (None where the question was
declined before the model was asked). The fit is the pair (coverage floor, refusal ceiling) that
declines the most questions of the groups that must be declined (mean of their rates) while declining
at most 5% of the answerable ones in all, cosine floor included; ties go to the more lenient pair.
`rag calibrate` and bench/calibrate_answerability.py both fit through `fit`, so the thresholds the
product fits on the shipped signals are exactly the ones that ship (docs/answers.md, "Calibration").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_ANSWERABLE_DECLINED = 0.05
ANSWERABLE = "answerable"
# The coverage floors searched: 0 to 1 in steps of 0.05.
COVERAGE_FLOORS = tuple(round(0.05 * k, 2) for k in range(21))
# A ceiling below this would decline nearly everything; the search starts here.
LOWEST_CEILING = 0.05


@dataclass(frozen=True)
class Signal:
    best_cosine: float | None
    coverage: float
    refusal_probability: float | None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Signal:
        """From a stored row (bench/results/answerability.*.json, a calibration's signal log)."""
        p = row.get("refusal_probability")
        cosine = row.get("best_cosine")
        return cls(
            None if cosine is None else float(cosine),
            float(row.get("coverage", 0.0)),
            None if p is None else float(p),
        )


@dataclass(frozen=True)
class Fit:
    sufficiency_floor: float
    min_coverage: float
    max_refusal_probability: float
    # Share of each group declined with the fitted thresholds, at 4 decimals.
    declined: Mapping[str, float]


def declined(signal: Signal, floor: float, min_coverage: float, ceiling: float) -> bool:
    """Whether `rag ask` declines this question with these thresholds (the refusal probability is
    compared at the 4 decimals it is recorded with)."""
    p = signal.refusal_probability
    return (
        signal.best_cosine is None
        or signal.best_cosine < floor
        or signal.coverage < min_coverage
        or (p is not None and p > ceiling)
    )


def rate(signals: Sequence[Signal], floor: float, min_coverage: float, ceiling: float) -> float:
    return sum(declined(s, floor, min_coverage, ceiling) for s in signals) / max(len(signals), 1)


def fit(
    groups: Mapping[str, Sequence[Signal]],
    cosine_floors: Sequence[float],
    *,
    coverage_floors: Sequence[float] = COVERAGE_FLOORS,
    budget: float = MAX_ANSWERABLE_DECLINED,
) -> Fit:
    """The (cosine floor, coverage floor, refusal ceiling) that declines the most questions of every
    group but "answerable" (mean of their rates) while declining at most `budget` of the answerable
    ones in all (or no more than the most lenient pair on offer already does, if that is more: the
    lowest cosine floor, with the lowest coverage floor and no ceiling).
    Ties go to the more lenient: the lower cosine floor, then the lower coverage floor, then the
    higher ceiling. `coverage_floors`: one value fits the ceiling alone (a corpus's calibration
    keeps the model's coverage floor)."""
    answerable = groups.get(ANSWERABLE, ())
    others = [rows for name, rows in groups.items() if name != ANSWERABLE]
    if not answerable or not others:
        raise ValueError("calibration needs answerable questions and questions to decline")
    probabilities = sorted(
        {s.refusal_probability for rows in groups.values() for s in rows if s.refusal_probability is not None}
    )
    ceilings = [1.0, *(p for p in probabilities if p >= LOWEST_CEILING)]
    # What the most lenient pair on offer declines anyway (a cosine floor, a fixed coverage floor).
    allowed = max(budget, rate(answerable, min(cosine_floors), min(coverage_floors), 1.0))
    best: tuple[tuple[float, float, float, float], float, float, float] | None = None
    for floor in cosine_floors:
        for coverage_floor in coverage_floors:
            for ceiling in ceilings:
                if rate(answerable, floor, coverage_floor, ceiling) > allowed:
                    continue
                score = sum(rate(rows, floor, coverage_floor, ceiling) for rows in others) / len(others)
                key = (score, -floor, -coverage_floor, ceiling)
                if best is None or key > best[0]:
                    best = (key, floor, coverage_floor, ceiling)
    assert best is not None  # the most lenient pair on offer is always within `allowed`
    _, floor, coverage_floor, ceiling = best
    rates = {name: round(rate(rows, floor, coverage_floor, ceiling), 4) for name, rows in groups.items()}
    return Fit(floor, coverage_floor, ceiling, rates)
