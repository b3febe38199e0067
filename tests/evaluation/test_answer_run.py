"""The answer benchmark's sampling, per-answer scoring and group summary, on hand-made answers."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from raggity.core.types import ABSTAIN_MESSAGE, Answer, Citation, Location
from raggity.evaluation.answer_run import (
    AnswerCase,
    AnswerRecord,
    ask_case,
    sample_cases,
    score_answer,
    summarize,
)
from raggity.evaluation.calibration_split import in_calibration_split
from raggity.evaluation.dataset import EvalQuery, SquadQuestion

QUESTIONS = tuple(
    SquadQuestion(
        f"q{i}", f"question {i}?", (f"answer {i}",) if i % 2 == 0 else (), i % 2 == 1, ("p1",), "p1"
    )
    for i in range(40)
)
UNRELATED = tuple(EvalQuery(f"u{i}", f"unrelated {i}?") for i in range(30))

CASE = AnswerCase("q0", "answerable", "Where did the Normans come from?", ("Normandy", "France"), ("p1",))
AT = Location(1, 3)


def answer(text: str, *citations: Citation, abstained: bool = False, refused: bool = False) -> Answer:
    return Answer(CASE.question, text, abstained, citations, (), refused=refused)


def ids(cases: list[AnswerCase]) -> list[str]:
    return [c.id for c in cases]


# -- sampling ---------------------------------------------------------------------------------------


def test_the_same_seed_draws_the_same_questions_in_the_same_order() -> None:
    first = sample_cases(QUESTIONS, UNRELATED, 5, seed=7)
    assert ids(first) == ids(sample_cases(QUESTIONS, UNRELATED, 5, seed=7))
    assert ids(first) != ids(sample_cases(QUESTIONS, UNRELATED, 5, seed=8))


def test_each_group_gets_its_own_sample() -> None:
    cases = sample_cases(QUESTIONS, UNRELATED, 5, seed=0)
    groups = [c.group for c in cases]
    assert groups == ["answerable"] * 5 + ["unanswerable"] * 5 + ["out-of-corpus"] * 5
    by_id = {q.id: q for q in QUESTIONS}
    for case in cases[:5]:
        assert not by_id[case.id].impossible
        assert case.answers == by_id[case.id].answers
        assert case.gold == ("p1",)
    for case in cases[5:10]:
        assert by_id[case.id].impossible
        assert (case.answers, case.gold) == ((), ())
    assert {c.id for c in cases[10:]} <= {q.id for q in UNRELATED}
    assert len(set(ids(cases))) == 15


def test_a_small_pool_is_taken_whole_and_other_groups_are_unchanged() -> None:
    with_unrelated = sample_cases(QUESTIONS, UNRELATED, 25, seed=3)
    without = sample_cases(QUESTIONS, (), 25, seed=3)
    # 20 answerable questions, of which q0, q10 and q32 are kept for calibration.
    assert [c.group for c in with_unrelated].count("answerable") == 17
    assert [c.group for c in with_unrelated].count("out-of-corpus") == 21  # 30, less 9 for calibration
    # Out-of-corpus queries do not shift the answerable and unanswerable samples.
    assert ids(without) == ids(with_unrelated)[: len(without)]


def test_blank_questions_are_not_asked() -> None:
    blank = SquadQuestion("blank", "   ", ("x",), False, ("p1",), "p1")
    cases = sample_cases((blank, *QUESTIONS[1:3]), (EvalQuery("u", ""),), 10, seed=0)
    assert ids(cases) == ["q2", "q1"]


def test_questions_kept_for_calibration_are_never_asked() -> None:
    cases = sample_cases(QUESTIONS, UNRELATED, 100, seed=0)
    asked = set(ids(cases))
    assert not asked & {"q0", "q3", "q10", "q11", "q17", "q23", "q32", "q33", "u2", "u5", "u26"}
    assert len(asked) == 40 - 8 + 30 - 9
    assert all(not in_calibration_split(i) for i in asked)


# -- scoring one answer -----------------------------------------------------------------------------


def test_a_correct_cited_answer() -> None:
    record = score_answer(
        CASE, answer("They came from Normandy [1].", Citation(1, "p1", AT, "...")), 0.5, 2.0
    )
    assert record.correct is True
    assert record.f1 == pytest.approx(2 / 5)  # "they came from normandy" vs "normandy": P 1/4, R 1
    assert (record.declined, record.cites_gold, record.verified, record.marker_only) == (
        False,
        True,
        True,
        False,
    )
    assert record.citations[0].source == "p1"
    assert (record.ttft_s, record.total_s) == (0.5, 2.0)


def test_markers_are_not_words_of_the_answer() -> None:
    gold_is_one = AnswerCase("q", "answerable", "How many?", ("1",), ("p1",))
    record = score_answer(gold_is_one, answer("[1]", Citation(1, "p1", AT, "...", supported=False)), 0.1, 0.2)
    assert record.correct is False
    assert record.f1 == 0.0
    assert record.marker_only is True
    assert record.verified is False
    assert record.cites_gold is False  # cited, but the citation was not verified


def test_a_verified_citation_of_another_paragraph_is_not_gold() -> None:
    record = score_answer(CASE, answer("Normandy [1].", Citation(1, "p9", AT, "...")), None, 1.0)
    assert (record.verified, record.cites_gold) == (True, False)


@pytest.mark.parametrize(("abstained", "refused"), [(True, False), (False, True)])
def test_a_declined_answer_scores_zero_whatever_its_text(abstained: bool, refused: bool) -> None:
    # The text names the gold answer, yet a declined answer is a no-answer, as in SQuAD 2.0.
    record = score_answer(
        CASE, answer("Not in the sources; maybe Normandy.", abstained=abstained, refused=refused), None, 0.1
    )
    assert record.declined is True
    assert (record.abstained, record.refused) == (abstained, refused)
    assert (record.correct, record.f1) == (False, 0.0)
    assert record.marker_only is False


def test_questions_without_gold_answers_get_no_correctness() -> None:
    case = AnswerCase("u1", "out-of-corpus", "What is the capital of Mongolia?")
    record = score_answer(case, answer("Ulaanbaatar [1].", Citation(1, "p1", AT, "...")), 0.2, 0.3)
    assert (record.correct, record.f1, record.cites_gold, record.declined) == (None, None, False, False)


# -- asking ---------------------------------------------------------------------------------------------


class Clock:
    """Advances one second per reading, so each measured span is the number of readings in between."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


class FakeAsker:
    def __init__(self, reply: Answer, pieces: list[str]) -> None:
        self.reply = reply
        self.pieces = pieces
        self.calls: list[tuple[str, bool | None]] = []

    def ask(
        self, question: str, *, on_token: Callable[[str], None] | None = None, use_cache: bool | None = None
    ) -> Answer:
        self.calls.append((question, use_cache))
        for piece in self.pieces:
            assert on_token is not None
            on_token(piece)
        return self.reply


def test_ask_case_times_the_first_token_and_skips_the_cache() -> None:
    asker = FakeAsker(answer("Normandy [1].", Citation(1, "p1", AT, "...")), ["Norm", "andy [1]."])
    record = ask_case(asker, CASE, Clock())
    # readings: start=1, first token=2 (the second piece reads nothing), end=3
    assert (record.ttft_s, record.total_s) == (1.0, 2.0)
    assert asker.calls == [(CASE.question, False)]


def test_ask_case_without_streamed_text_has_no_first_token() -> None:
    record = ask_case(FakeAsker(answer(ABSTAIN_MESSAGE, abstained=True), []), CASE, Clock())
    assert (record.ttft_s, record.total_s) == (None, 1.0)


# -- the group summary --------------------------------------------------------------------------------


def _record(
    *,
    declined: bool = False,
    correct: bool | None = True,
    f1: float | None = 1.0,
    verified: bool = True,
    unsupported: bool = False,
    cites_gold: bool = True,
    marker_only: bool = False,
    ttft: float | None = 1.0,
    total: float = 2.0,
    closest: int = 0,
) -> AnswerRecord:
    return AnswerRecord(
        "q", "answerable", "?", "...", declined, declined, False, closest, (), cites_gold, verified,
        unsupported, marker_only, correct, f1, ttft, total,
    )  # fmt: skip


def test_summary_by_hand() -> None:
    records = [
        _record(f1=1.0, ttft=1.0, total=2.0),
        _record(correct=False, f1=0.5, cites_gold=False, ttft=3.0, total=4.0),
        _record(correct=False, f1=0.0, cites_gold=False, marker_only=True, ttft=2.0, total=3.0),
        _record(
            declined=True,
            correct=False,
            f1=0.0,
            verified=False,
            unsupported=True,
            cites_gold=False,
            ttft=None,
            total=0.5,
        ),
    ]
    score = summarize("answerable", records)
    assert (score.n, score.answered) == (4, 3)
    assert score.correct == 0.25
    assert score.f1 == pytest.approx(1.5 / 4)
    assert score.declined == 0.25
    assert score.cites_gold == 0.25
    assert score.unsupported == 0.25  # of all 4: one declined because no source backed its reply
    assert score.marker_only == pytest.approx(1 / 3)
    # ttft of the three streamed answers, sorted 1, 2, 3: p50 = 2; p95 at position 1.9 = 2 + 0.9
    assert score.ttft_p50_s == 2.0
    assert score.ttft_p95_s == pytest.approx(2.9)
    # totals sorted 0.5, 2, 3, 4: p50 at position 1.5 = 2.5; p95 at 2.85 = 3 + 0.85
    assert score.total_p50_s == 2.5
    assert score.total_p95_s == pytest.approx(3.85)


def test_the_share_of_declines_that_showed_closest_passages_counts_declines_only() -> None:
    records = [
        _record(declined=True, closest=3),
        _record(declined=True, closest=0),
        _record(declined=True, closest=1),
        _record(closest=0),  # an answer shows no closest passages, and is not counted
    ]
    assert summarize("answerable", records).declined_with_closest == pytest.approx(2 / 3)
    assert summarize("answerable", [_record()]).declined_with_closest is None


def test_summary_of_a_group_without_gold_answers_or_answers() -> None:
    records = [_record(declined=True, correct=None, f1=None, ttft=None, total=1.0)] * 2
    score = summarize("out-of-corpus", records)
    assert (score.declined, score.answered) == (1.0, 0)
    assert (score.correct, score.f1, score.cites_gold) == (None, None, None)
    assert (score.unsupported, score.marker_only, score.ttft_p50_s, score.ttft_p95_s) == (
        0.0,
        None,
        None,
        None,
    )
    assert score.total_p50_s == 1.0
