"""`rag calibrate --corpus`'s plumbing: questions written from the index's own chunks are kept only
when retrieval finds their chunk and it holds their answer; the floors and the ceiling are fitted on
them and stored with the index (real index, scripted model)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from raggity.api.calibrate_corpus import calibrate_corpus, found_by_retrieval, holds_answer
from raggity.api.session import Raggity
from raggity.config.schema import Config, IndexConfig, RetrievalConfig
from raggity.core.errors import RaggityError
from raggity.core.protocols import Messages
from raggity.core.types import Chunk, Location
from raggity.evaluation.calibration_set import load_calibration_set
from raggity.evaluation.calibration_store import CORPUS_FORMAT, read_corpus_calibration
from raggity.models.packaged import GENERATORS
from raggity.pipeline.answer.answerability import CALIBRATED
from raggity.pipeline.answer.thresholds import resolve_thresholds
from raggity.store.layout import IndexLayout
from raggity.testing import HashEmbedder, ScriptedGenerator
from tests.support import JOB_TOOLS as TOOLS

UNANSWERED = "grindle"  # its question's answer is not in its chunk: it is not kept


@pytest.fixture(autouse=True)
def _own_models_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Calibrations are stored under the models folder, which the test session shares: one written
    here must not change the thresholds other tests answer with."""
    monkeypatch.setenv("RAGGITY_MODELS_DIR", str(tmp_path / "models"))


def passage(messages: Messages) -> str:
    return messages[-1]["content"].split("Passage:\n", 1)[1].split("\n\nWrite one question", 1)[0]


def write(messages: Messages) -> str:
    if "Passage:\n" not in messages[-1]["content"]:
        return reply(messages)
    text = passage(messages)
    tool, does = next((t, d) for t, d in TOOLS if t in text)
    answer = "every hour" if tool == UNANSWERED else does
    return json.dumps({"question": f"What does the {tool} job do?", "answer": answer})


def reply(messages: Messages) -> str:
    """The reply to an answer prompt: the asked tool's sentence, where its source is given."""
    prompt = messages[-1]["content"]
    question = prompt.split("Question: ", 1)[1].split("\n", 1)[0]
    tool, does = next(((t, d) for t, d in TOOLS if f"the {t} job" in question), ("", ""))
    return f"The {tool} job {does} [1]." if tool and f"The {tool} job {does}" in prompt else "I do not know."


def test_the_corpus_ceiling_is_fitted_on_questions_from_its_own_chunks_and_stored_with_it(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for tool, does in TOOLS:
        (docs / f"{tool}.md").write_text(f"# The {tool} job\n\nThe {tool} job {does}.\n", encoding="utf-8")
    unrelated = {q.question for q in load_calibration_set().of_group("out_of_corpus")}

    def judge(messages: Messages, text: str) -> float:
        """Refuses what the sources do not answer: an unrelated question, or a tool's question
        whose own file's sentence is not among the sources."""
        prompt = messages[-1]["content"]
        question = prompt.split("Question: ", 1)[1].split("\n", 1)[0].strip()
        tool = next((t for t, _ in TOOLS if f"the {t} job" in question), None)
        refuse = question in unrelated or (
            tool is not None and f"The {tool} job {dict(TOOLS)[tool]}" not in prompt
        )
        if text == "Yes":
            return 0.2 if refuse else 0.8
        return 0.8 if refuse else 0.2

    config = replace(
        Config(),
        index=IndexConfig(str(tmp_path / "index")),
        retrieval=replace(RetrievalConfig(), sufficiency_floor=0.0, rerank=False),
    )
    generator = ScriptedGenerator(write, judge)
    session = Raggity(config, embedder=HashEmbedder(), generator=generator)
    session.ingest([docs])

    # 14 wanted of 14 chunks: every chunk is tried.
    run = calibrate_corpus(config, per_group=14, models=session.models)

    c = run.calibration
    assert c.scope == "corpus"
    assert c.n["out_of_corpus"] == 14
    # Of the 13 questions whose chunk holds their answer, those whose chunk retrieval found (hash
    # vectors carry no meaning: BM25 finds most).
    assert 10 <= c.n["answerable"] <= 13
    # Judged now: 13 written questions, 14 unrelated ones, and each kept one again without its file.
    assert run.new_questions == 27 + c.n["answerable"]
    assert c.n["answer_removed"] == c.n["answerable"]
    # The question whose answer its chunk does not hold was written, and never asked.
    assert any(UNANSWERED in passage(m) for m in generator.calls)
    assert not any(f"What does the {UNANSWERED} job do?" in m[-1]["content"] for m, _ in generator.judged)
    # The floors are this index's (format 2): the configured cosine floor 0 is not what it keeps.
    assert c.format == CORPUS_FORMAT
    assert c.fitted_floor == c.sufficiency_floor
    assert c.sufficiency_floor > config.retrieval.sufficiency_floor
    assert (c.sufficiency_floor, c.min_coverage) != (0.0, CALIBRATED[config.generation.model].min_coverage)
    assert c.declined["answerable"] == 0.0
    assert c.declined["out_of_corpus"] == 1.0
    # The questions asked without their own file's chunks hold the ceiling below "no judgement".
    assert c.declined["answer_removed"] == 1.0
    assert c.max_refusal_probability < 1.0
    assert run.stored_at == IndexLayout(config.index_dir).calibration
    sha = GENERATORS[config.generation.model].sha256
    assert read_corpus_calibration(run.stored_at, sha) == c
    assert resolve_thresholds(config).origin == "corpus"
    # Every door answers with the index's cosine floor.
    assert session.settings().sufficiency_floor == c.sufficiency_floor
    # Every question was written from an indexed chunk, with the JSON schema.
    assert all(
        schema is not None
        for m, schema in zip(generator.calls, generator.schemas, strict=True)
        if "Passage:" in m[-1]["content"]
    )

    # Two questions fit nothing worth storing: it says so instead.
    with pytest.raises(RaggityError, match="at least 10 are needed"):
        calibrate_corpus(config, per_group=2, models=session.models)


def test_a_chunk_holds_an_answer_it_says_word_for_word_or_nearly() -> None:
    chunk = Chunk("c", "a.md", "The wuzzle job renews the TLS\ncertificates.", "", Location(1, 2), "p", 0, 9)

    assert holds_answer(chunk, "renews the  TLS certificates")
    # In its own words, with the chunk's: "It renews certificates." (4 of 4 content words held).
    assert holds_answer(chunk, "It renews the TLS certificates of the wuzzle job.")
    assert not holds_answer(chunk, "It rotates the logs every night.")
    assert not holds_answer(chunk, "It renews certificates with certbot every week.")  # 2 of 5
    assert not holds_answer(chunk, " ")


def test_a_question_counts_only_when_retrieval_found_its_chunk() -> None:
    chunk = Chunk("c7", "a.md", "The wuzzle job renews the TLS certificates.", "", Location(1, 1), "p", 0, 9)

    assert found_by_retrieval(chunk, {"chunks": ["c3", "c7"]})
    assert not found_by_retrieval(chunk, {"chunks": ["c3", "c4"]})
    assert not found_by_retrieval(chunk, {})
