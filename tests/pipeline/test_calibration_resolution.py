"""Which thresholds a configuration answers with: the index's calibration, the model's, the shipped
pair, or the default with a warning; and `rag calibrate`'s plumbing (real index, scripted judgement)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest

from raggity.api.calibrate import calibrate_model
from raggity.api.session import Raggity
from raggity.config.schema import Config, GenerationConfig, IndexConfig, RetrievalConfig
from raggity.core.protocols import Messages
from raggity.evaluation.calibration_set import load_calibration_set
from raggity.evaluation.calibration_store import (
    CORPUS_FORMAT,
    Calibration,
    SignalLog,
    read_model_calibration,
    write_corpus_calibration,
    write_model_calibration,
)
from raggity.models.packaged import GENERATORS
from raggity.pipeline.answer.answerability import CALIBRATED, Thresholds
from raggity.pipeline.answer.prompt import PROMPT_VERSION
from raggity.pipeline.answer.thresholds import resolve_thresholds
from raggity.pipeline.model_loading import Models
from raggity.store.layout import IndexLayout
from raggity.testing import HashEmbedder, ScriptedGenerator
from tests.support import must_not_generate

DEFAULT = GenerationConfig.model


@pytest.fixture(autouse=True)
def _own_models_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Calibrations are stored under the models folder, which the test session shares: one written
    here must not change the thresholds other tests answer with."""
    monkeypatch.setenv("RAGGITY_MODELS_DIR", str(tmp_path / "models"))


def stored(
    sha: str, coverage: float, ceiling: float, *, prompt: str = PROMPT_VERSION, scope: str = "model"
) -> Calibration:
    return Calibration(
        DEFAULT,
        sha,
        "2026-11-26T21:00:00+00:00",
        prompt,
        0.25,
        coverage,
        ceiling,
        {"answerable": 7},
        {},
        scope,
    )


def config_in(folder: Path, **generation: str) -> Config:
    return replace(
        Config(),
        index=IndexConfig(str(folder / "index")),
        generation=replace(Config().generation, **generation),
    )


def test_a_packaged_model_answers_with_its_shipped_pair_until_it_is_calibrated(tmp_path: Path) -> None:
    config = config_in(tmp_path)
    assert resolve_thresholds(config).origin == "shipped"
    assert resolve_thresholds(config).thresholds == CALIBRATED[DEFAULT]

    write_model_calibration(stored(GENERATORS[DEFAULT].sha256, 0.35, 0.61))
    resolved = resolve_thresholds(config)
    assert (resolved.origin, resolved.thresholds) == ("calibrated", Thresholds(0.35, 0.61))
    assert resolved.summary.startswith("calibrated 2026-11-26, n=7")
    # The session answers with it: every door reads its settings here.
    assert Raggity(config).settings().answerability == Thresholds(0.35, 0.61)


def test_a_calibration_of_another_prompt_version_is_not_used(tmp_path: Path) -> None:
    write_model_calibration(stored(GENERATORS[DEFAULT].sha256, 0.35, 0.61, prompt="1"))
    assert resolve_thresholds(config_in(tmp_path)).origin == "shipped"


def test_the_index_calibration_comes_first_and_belongs_to_one_model(tmp_path: Path) -> None:
    config = config_in(tmp_path)
    sha = GENERATORS[DEFAULT].sha256
    write_model_calibration(stored(sha, 0.35, 0.61))
    layout = IndexLayout(config.index_dir)
    write_corpus_calibration(layout.calibration, stored(sha, 0.35, 0.83, scope="corpus"))
    write_corpus_calibration(layout.calibration, stored("0" * 64, 0.1, 0.2, scope="corpus"))

    resolved = resolve_thresholds(config)
    assert (resolved.origin, resolved.thresholds) == ("corpus", Thresholds(0.35, 0.83))
    assert "calibrated on this index" in resolved.summary
    assert "declines nothing" not in resolved.summary
    # A ceiling of 1 (the judgement told nothing apart on this index) is said wherever it shows.
    write_corpus_calibration(layout.calibration, stored(sha, 0.35, 1.0, scope="corpus"))
    assert "the model's judgement declines nothing" in resolve_thresholds(config).summary
    write_corpus_calibration(layout.calibration, stored(sha, 0.35, 0.83, scope="corpus"))
    # Its own model's pair is what a corpus calibration starts from.
    assert resolve_thresholds(config, corpus=False).thresholds == Thresholds(0.35, 0.61)


def test_an_index_calibration_of_format_2_answers_with_its_cosine_floor(tmp_path: Path) -> None:
    config = config_in(tmp_path)
    sha = GENERATORS[DEFAULT].sha256
    calibration = IndexLayout(config.index_dir).calibration
    fitted = replace(stored(sha, 0.0, 0.83, scope="corpus"), sufficiency_floor=0.4)

    # Format 1 fitted the ceiling alone: its recorded floor was the config's, which still holds.
    write_corpus_calibration(calibration, fitted)
    assert resolve_thresholds(config).sufficiency_floor is None
    assert Raggity(config).settings().sufficiency_floor == config.retrieval.sufficiency_floor

    write_corpus_calibration(calibration, replace(fitted, format=CORPUS_FORMAT))
    resolved = resolve_thresholds(config)
    assert resolved.sufficiency_floor == 0.4
    assert "cosine floor 0.4, coverage floor 0.0" in resolved.summary
    assert Raggity(config).settings().sufficiency_floor == 0.4
    # A user who raised the floor above the index's keeps theirs.
    raised = replace(config, retrieval=replace(config.retrieval, sufficiency_floor=0.5))
    assert Raggity(raised).settings().sufficiency_floor == 0.5
    # The model's own calibration never moves the floor.
    assert resolve_thresholds(config, corpus=False).sufficiency_floor is None


def test_a_model_file_nobody_calibrated_gets_the_default_and_a_warning_once(tmp_path: Path) -> None:
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF not really weights")
    # model_path names the file, whatever `model` says: the packaged pair is not its pair.
    config = config_in(tmp_path, model_path=str(gguf), model=DEFAULT)
    warnings: list[str] = []
    session = Raggity(config, generator=ScriptedGenerator(must_not_generate), warn=warnings.append)

    assert session.settings().answerability == Thresholds()
    session.settings()
    assert len(warnings) == 1
    assert "uncalibrated: run `rag calibrate`" in warnings[0]

    sha = hashlib.sha256(gguf.read_bytes()).hexdigest()
    write_model_calibration(stored(sha, 0.2, 0.44))
    assert resolve_thresholds(config).thresholds == Thresholds(0.2, 0.44)


def test_a_signal_log_resumes_past_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = SignalLog(path)
    with log.appending() as handle:
        log.add(handle, {"question": "a?", "coverage": 1.0})
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"question": "b?", "cov')  # killed mid-write

    resumed = SignalLog(path)
    assert set(resumed.rows) == {"a?"}
    with resumed.appending() as handle:
        resumed.add(handle, {"question": "c?", "coverage": 0.5})
    assert set(SignalLog(path).rows) == {"a?", "c?"}


def test_calibrate_fits_on_the_shipped_set_stores_beside_the_model_and_resumes(tmp_path: Path) -> None:
    shipped = load_calibration_set()
    to_decline = {q.question.strip() for q in shipped.questions if q.group != "answerable"}

    def judge(messages: Messages, text: str) -> float:
        """Sure of every answerable question, sure of declining every other."""
        asked = messages[-1]["content"].split("Question: ", 1)[1].split("\n", 1)[0].strip()
        refuse = any(q in asked for q in to_decline)
        if text == "Yes":
            return 0.1 if refuse else 0.9
        if text == "No":
            return 0.9 if refuse else 0.1
        return 0.9 if refuse else 0.1

    config = replace(
        config_in(tmp_path), retrieval=replace(RetrievalConfig(), sufficiency_floor=0.0, rerank=False)
    )
    generator = ScriptedGenerator(must_not_generate, judge)
    models = Models(config, embedder=HashEmbedder(), generator=generator)
    seen: list[tuple[int, int]] = []

    run = calibrate_model(
        config, per_group=4, progress=lambda done, total: seen.append((done, total)), models=models
    )

    c = run.calibration
    assert c.n == {"answerable": 4, "impossible": 4, "out_of_corpus": 4}
    assert c.declined["answerable"] == 0.0
    assert c.declined["out_of_corpus"] == 1.0
    assert c.max_refusal_probability < 0.9
    assert seen[0] == (0, 12)
    assert seen[-1] == (12, 12)
    assert read_model_calibration(GENERATORS[DEFAULT].sha256) == c
    assert resolve_thresholds(config).origin == "calibrated"
    assert not generator.calls  # nothing was generated

    # A second run reads every signal from the log: the model judges nothing.
    judged = len(generator.judged)
    again = calibrate_model(config, per_group=4, models=models)
    assert again.new_questions == 0
    assert len(generator.judged) == judged
    assert again.calibration.max_refusal_probability == c.max_refusal_probability
