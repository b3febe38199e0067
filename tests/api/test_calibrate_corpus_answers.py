"""`rag calibrate --corpus` counts each written question by the answer the model gives it: the 5%
budget keeps the ones answered right, and the ones answered wrong but shown as verified are to be
declined like unrelated ones (real index, scripted model: which answers are wrong must be known)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from raggity.api.calibrate_corpus import ANSWERED_WRONG, REPLY_WORDS_HELD, calibrate_corpus, says
from raggity.api.session import Raggity
from raggity.config.schema import Config, IndexConfig, RetrievalConfig
from raggity.core.errors import RaggityError
from raggity.core.protocols import Messages
from raggity.evaluation.calibration import ANSWERABLE
from raggity.testing import HashEmbedder, ScriptedGenerator
from tests.support import JOB_TOOLS as TOOLS

# The model answers these with the first words of their sentence only ("The lollop job locks an
# account."): every word is in the source, so the reply is shown as verified, but it leaves out
# what the written answer says.
HALF_ANSWERED = ("wuzzle", "brantle", "lollop")
# The judgement's refusal probability: low where the sources answer and the model answers right,
# middling where it answers half, high where the sources do not answer.
RIGHT, HALF, REFUSE = 0.2, 0.5, 0.8


@pytest.fixture(autouse=True)
def _own_models_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Calibrations and their logs are stored under the models folder, which the test session
    shares: one written here must not change other tests' thresholds."""
    monkeypatch.setenv("RAGGITY_MODELS_DIR", str(tmp_path / "models"))


def asked(prompt: str) -> tuple[str, str] | None:
    question = prompt.split("Question: ", 1)[1].split("\n", 1)[0]
    return next(((t, d) for t, d in TOOLS if f"the {t} job" in question), None)


def write(messages: Messages) -> str:
    prompt = messages[-1]["content"]
    if "Passage:\n" in prompt:
        tool, does = next((t, d) for t, d in TOOLS if t in prompt)
        return json.dumps({"question": f"What does the {tool} job do?", "answer": does})
    found = asked(prompt)
    if found is None or f"The {found[0]} job {found[1]}" not in prompt:
        return "I do not know."
    tool, does = found
    said = " ".join(does.split()[:3]) if tool in HALF_ANSWERED else does
    return f"The {tool} job {said} [1]."


def level(messages: Messages) -> float:
    prompt = messages[-1]["content"]
    found = asked(prompt)
    if found is None or f"The {found[0]} job {found[1]}" not in prompt:
        return REFUSE
    return HALF if found[0] in HALF_ANSWERED else RIGHT


def judge(messages: Messages, text: str) -> float:
    p = level(messages)
    return 1 - p if text == "Yes" else p


def session_on_tools(tmp_path: Path, script: Callable[[Messages], str] = write) -> tuple[Config, Raggity]:
    docs = tmp_path / "docs"
    docs.mkdir()
    for tool, does in TOOLS:
        (docs / f"{tool}.md").write_text(f"# The {tool} job\n\nThe {tool} job {does}.\n", encoding="utf-8")
    config = replace(
        Config(),
        index=IndexConfig(str(tmp_path / "index")),
        retrieval=replace(RetrievalConfig(), sufficiency_floor=0.0, rerank=False),
    )
    session = Raggity(config, embedder=HashEmbedder(), generator=ScriptedGenerator(script, judge))
    session.ingest([docs])
    return config, session


def replies(session: Raggity) -> int:
    """Answer prompts the scripted model was given (the rest wrote questions)."""
    generator = session.models.generator
    assert isinstance(generator, ScriptedGenerator)
    return sum("Passage:\n" not in m[-1]["content"] for m in generator.calls)


def test_the_ceiling_declines_answers_shown_as_verified_that_are_wrong_and_keeps_the_right_ones(
    tmp_path: Path,
) -> None:
    config, session = session_on_tools(tmp_path)

    run = calibrate_corpus(config, per_group=14, models=session.models)

    c = run.calibration
    # The half answers were kept as questions (their chunk holds the written answer) but counted
    # by their answer: the budget is spent on the right ones only.
    assert c.n[ANSWERED_WRONG] >= 2
    assert c.n[ANSWERABLE] + c.n[ANSWERED_WRONG] == c.n["answer_removed"]
    assert c.declined[ANSWERABLE] == 0.0
    assert c.declined[ANSWERED_WRONG] == 1.0
    # Counted as answerable, the half answers (0.5) would have held the ceiling above them.
    assert RIGHT <= c.max_refusal_probability < HALF
    assert c.declined["out_of_corpus"] == 1.0
    # Each kept question's answer was generated once; a second run reads them from the log.
    assert replies(session) == c.n["answer_removed"]
    again = calibrate_corpus(config, per_group=14, models=session.models)
    assert again.calibration.max_refusal_probability == c.max_refusal_probability
    assert replies(session) == c.n["answer_removed"]


def half(messages: Messages) -> str:
    """Every question answered with the first two words of its sentence only."""
    prompt = messages[-1]["content"]
    found = None if "Passage:\n" in prompt else asked(prompt)
    if found is None:
        return write(messages)
    return f"The {found[0]} job {' '.join(found[1].split()[:2])} [1]."


def test_a_model_that_answers_too_few_of_its_own_questions_right_fits_nothing(tmp_path: Path) -> None:
    config, session = session_on_tools(tmp_path, half)

    with pytest.raises(RaggityError, match=r"answered only 0 of the .* at least 5 are needed"):
        calibrate_corpus(config, per_group=14, models=session.models)


def test_a_reply_says_the_written_answer_word_for_word_or_with_most_of_its_words() -> None:
    assert says("To rotate them, run `logrotate  -f` [1].", "logrotate -f")
    assert says(
        "The job locks the account after five failed logins.", "locks an account after five failed logins"
    )
    # A short answer is said only as a whole word, and a marker says nothing.
    assert says("The default is 2.", "2")
    assert not says("The default is 4 [2]. See v2.1.", "2")
    # A reply gives the core of a written answer of a sentence or two: half its words will do.
    written = "Only meaningful in --parseopt mode. Tells the option parser to echo out the first -- met."
    reply = "The `--keep-dashdash` option tells the option parser to echo out the first -- met [1]."
    assert says(reply, written, REPLY_WORDS_HELD)
    assert not says(reply, written)
    assert not says("It makes the output a single line [1].", written, REPLY_WORDS_HELD)
    # 2 of its 5 words: the reply leaves out what the answer says.
    assert not says("The lollop job locks an account [1].", "locks an account after five failed logins")
