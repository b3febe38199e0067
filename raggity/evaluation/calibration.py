"""The answerability calibration's principle, as a function of collected signals.

Each question asked during calibration leaves three signals: the best dense cosine of its candidates,
the coverage of its best source, and the model's refusal probability (None where the question was
declined before the model was asked). The fit is the pair (coverage floor, refusal ceiling) that
declines the most questions of the groups that must be declined (mean of their rates) while declining
at most 5% of the answerable ones in all, cosine floor included; ties go to the more lenient pair.
`rag calibrate` and bench/calibrate_answerability.py both fit through `fit`, so the thresholds the
product fits on the shipped signals are exactly the ones that ship (docs/answers.md, "Calibration").

A corpus's calibration (`rag calibrate --corpus`) also fits the topic gates, the cosine and coverage
floors, on its own index (`fit_floors`): the floors that decline the most unrelated questions at the
least cost to answerable ones, within the same budget; its ceiling is then fitted by `fit` above them.
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
class Floors:
    sufficiency_floor: float
    min_coverage: float


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


def cosine_floors(groups: Mapping[str, Sequence[Signal]], lowest: float) -> list[float]:
    """The cosine floors worth trying: `lowest`, and just above each best cosine seen at or above it
    (a floor declines what lies below it, so the lowest floor that declines a question sits there)."""
    seen = {
        round(round(s.best_cosine, 4) + 0.0001, 4)
        for rows in groups.values()
        for s in rows
        if s.best_cosine is not None and s.best_cosine >= lowest
    }
    return sorted({lowest, *seen})


def fit_floors(
    answerable: Sequence[Signal],
    unrelated: Sequence[Signal],
    cosine_floors: Sequence[float],
    *,
    coverage_floors: Sequence[float] = COVERAGE_FLOORS,
    budget: float = MAX_ANSWERABLE_DECLINED,
) -> Floors:
    """The topic gates, the model's judgement left out, one after the other, each declining the most
    unrelated questions while the two decline at most `budget` of the answerable ones (or what the
    most lenient pair declines, if more), and of those the fewest answerable ones.

    First the cosine floor (coverage off): of the floors that do equally well, the one midway between
    the first and the next floor that does otherwise, so that it sits as far from the unrelated
    questions it declines as from the answerable ones it keeps (the questions here are samples, and
    the model writes its answerable ones nearer their chunk's words than a user would). Then the
    coverage floor above it: the lowest that does best, since a question it declines that the cosine
    floor let through is one that shares too few words with every source."""
    if not answerable or not unrelated:
        raise ValueError("calibration needs answerable questions and questions to decline")
    allowed = max(budget, rate(answerable, min(cosine_floors), min(coverage_floors), 1.0))

    def key(floor: float, coverage_floor: float) -> tuple[float, float] | None:
        cost = rate(answerable, floor, coverage_floor, 1.0)
        return None if cost > allowed else (rate(unrelated, floor, coverage_floor, 1.0), -cost)

    lowest_coverage = min(coverage_floors)
    floors = sorted(cosine_floors)
    keys = [key(f, lowest_coverage) for f in floors]
    best = max(k for k in keys if k is not None)
    first = keys.index(best)
    after = next((i for i in range(first + 1, len(floors)) if keys[i] != best), None)
    # Floors sit 0.0001 above a question's cosine: midway between the cosine of the last question the
    # first best floor declines and that of the first question the next floor would. Where raising
    # the lowest floor gains nothing, or no floor does otherwise, the first best floor is kept.
    floor = floors[first]
    if first > 0 and after is not None:
        floor = round((floors[first] + floors[after]) / 2 - 0.0001, 4)
    coverage_keys = [(key(floor, c), -c, c) for c in coverage_floors]
    _, _, coverage_floor = max((k, lenient, c) for k, lenient, c in coverage_keys if k is not None)
    return Floors(floor, coverage_floor)
