"""The answer benchmark: seeded question samples per group, each asked once, scored, and summarised."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from raggity.core.types import Answer
from raggity.evaluation.answer_metrics import best_f1, contains_answer, is_marker_only, strip_markers
from raggity.evaluation.calibration_split import in_calibration_split
from raggity.evaluation.dataset import EvalQuery, SquadQuestion
from raggity.evaluation.metrics import percentile

Group = Literal["answerable", "unanswerable", "out-of-corpus"]
GROUPS: tuple[Group, ...] = ("answerable", "unanswerable", "out-of-corpus")


class Asker(Protocol):
    """What the benchmark needs of a session: the real ask pipeline (raggity.api.session.Raggity)."""

    def ask(
        self, question: str, *, on_token: Callable[[str], None] | None = None, use_cache: bool | None = None
    ) -> Answer: ...


class AnswerProgress(Protocol):
    def begin(self, total: int) -> None: ...

    def answered(self, record: AnswerRecord) -> None: ...


@dataclass(frozen=True)
class AnswerCase:
    """One question to ask; `answers` and `gold` (corpus ids) are empty where the corpus holds no answer."""

    id: str
    group: Group
    question: str
    answers: tuple[str, ...] = ()
    gold: tuple[str, ...] = ()


@dataclass(frozen=True)
class CitedSource:
    n: int
    source: str
    supported: bool


@dataclass(frozen=True)
class AnswerRecord:
    """One asked question with its answer and every per-question measure (one line of --details)."""

    id: str
    group: Group
    question: str
    answer: str
    declined: bool
    abstained: bool
    refused: bool
    closest: int  # passages shown with a decline, to read instead (0 with an answer)
    citations: tuple[CitedSource, ...]
    cites_gold: bool
    verified: bool
    unsupported: bool  # declined because no source supported a sentence of the model's reply
    marker_only: bool
    correct: bool | None
    f1: float | None
    ttft_s: float | None
    total_s: float


@dataclass(frozen=True)
class GroupScore:
    """Per-group results. Shares of `n`: correct, declined, unsupported (declined because no source
    supported the model's reply), cites_gold; share of `answered` (the questions not declined):
    marker_only; share of the declined ones: declined_with_closest (a decline shows the closest
    passages it read). None where the measure does not apply."""

    group: Group
    n: int
    answered: int
    correct: float | None
    f1: float | None
    declined: float
    declined_with_closest: float | None
    cites_gold: float | None
    unsupported: float
    marker_only: float | None
    ttft_p50_s: float | None
    ttft_p95_s: float | None
    total_p50_s: float
    total_p95_s: float


def sample_cases(
    questions: Sequence[SquadQuestion], unrelated: Sequence[EvalQuery], per_group: int, seed: int
) -> list[AnswerCase]:
    """Up to `per_group` cases of each group, drawn without replacement, never from the calibration
    split (see calibration_split).

    Each group has its own generator seeded from (seed, group), so adding out-of-corpus queries or
    changing one group's pool leaves the other groups' samples as they were.
    """
    pools: dict[Group, list[AnswerCase]] = {
        "answerable": [
            AnswerCase(q.id, "answerable", q.question, q.answers, q.gold)
            for q in questions
            if not q.impossible and q.question.strip() and not in_calibration_split(q.id)
        ],
        "unanswerable": [
            AnswerCase(q.id, "unanswerable", q.question)
            for q in questions
            if q.impossible and q.question.strip() and not in_calibration_split(q.id)
        ],
        "out-of-corpus": [
            AnswerCase(q.id, "out-of-corpus", q.text)
            for q in unrelated
            if q.text.strip() and not in_calibration_split(q.id)
        ],
    }
    cases: list[AnswerCase] = []
    for group in GROUPS:
        pool = pools[group]
        cases += random.Random(f"{seed}:{group}").sample(pool, min(per_group, len(pool)))
    return cases


def score_answer(case: AnswerCase, answer: Answer, ttft_s: float | None, total_s: float) -> AnswerRecord:
    """Scores one answer. A declined answer counts as wrong with F1 0, as a no-answer does in SQuAD 2.0;
    correct and F1 are None for questions without gold answers."""
    declined = answer.abstained or answer.refused
    said = strip_markers(answer.text)
    has_answers = bool(case.answers)
    # Evaluation indexes each corpus document under its id, so a citation's source is a corpus id.
    return AnswerRecord(
        id=case.id,
        group=case.group,
        question=case.question,
        answer=answer.text,
        declined=declined,
        abstained=answer.abstained,
        refused=answer.refused,
        closest=len(answer.closest),
        citations=tuple(CitedSource(c.n, c.source, c.supported) for c in answer.citations),
        cites_gold=any(c.supported and c.source in case.gold for c in answer.citations),
        verified=answer.verified,
        unsupported=bool(answer.unsupported_reply),
        marker_only=not declined and is_marker_only(answer.text),
        correct=(not declined and contains_answer(said, case.answers)) if has_answers else None,
        f1=(0.0 if declined else best_f1(said, case.answers)) if has_answers else None,
        ttft_s=ttft_s,
        total_s=total_s,
    )


def ask_case(asker: Asker, case: AnswerCase, clock: Callable[[], float] = time.perf_counter) -> AnswerRecord:
    """Asks one question without the answer cache; the time to first token runs from the call to the
    first streamed piece, and is None when nothing was streamed (an abstention returns at once)."""
    first: list[float] = []

    def on_token(_: str) -> None:
        if not first:
            first.append(clock())

    started = clock()
    answer = asker.ask(case.question, on_token=on_token, use_cache=False)
    total = clock() - started
    return score_answer(case, answer, first[0] - started if first else None, total)


def run_cases(
    asker: Asker, cases: Sequence[AnswerCase], progress: AnswerProgress | None = None
) -> list[AnswerRecord]:
    if progress is not None:
        progress.begin(len(cases))
    records = []
    for case in cases:
        record = ask_case(asker, case)
        records.append(record)
        if progress is not None:
            progress.answered(record)
    return records


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _p(values: Sequence[float], p: float) -> float | None:
    return percentile(values, p) if values else None


def summarize(group: Group, records: Sequence[AnswerRecord]) -> GroupScore:
    """The group's figures; `records` must all belong to `group` and not be empty."""
    answered = [r for r in records if not r.declined]
    declined = [r for r in records if r.declined]
    scored = [r for r in records if r.f1 is not None]
    ttft = [r.ttft_s for r in records if r.ttft_s is not None]
    totals = [r.total_s for r in records]
    return GroupScore(
        group=group,
        n=len(records),
        answered=len(answered),
        correct=_share([bool(r.correct) for r in scored]),
        f1=sum(r.f1 or 0.0 for r in scored) / len(scored) if scored else None,
        declined=len(declined) / len(records),
        declined_with_closest=_share([r.closest > 0 for r in declined]),
        cites_gold=_share([r.cites_gold for r in scored]),
        unsupported=sum(r.unsupported for r in records) / len(records),
        marker_only=_share([r.marker_only for r in answered]),
        ttft_p50_s=_p(ttft, 50),
        ttft_p95_s=_p(ttft, 95),
        total_p50_s=percentile(totals, 50),
        total_p95_s=percentile(totals, 95),
    )


def summarize_all(records: Sequence[AnswerRecord]) -> tuple[GroupScore, ...]:
    """One score per group that has records, in the order of GROUPS."""
    return tuple(
        summarize(group, [r for r in records if r.group == group])
        for group in GROUPS
        if any(r.group == group for r in records)
    )
