"""`rag calibrate`: fits the generator's coverage floor and refusal ceiling on the calibration set that
ships inside the package, and stores them beside the model (see evaluation/calibration_store.py).

The shipped set's passages are indexed once in a folder of their own under raggity's cache (per
embedder), its questions asked through the real ask pipeline (calibration_signals.py), and the pair
fitted by the principle every calibration uses (evaluation/calibration.py). Signals are appended to a
log as they come, so an interrupted run continues; the fit reads the log.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from raggity.api.calibration_signals import signal_row, signals_session
from raggity.api.session import Raggity
from raggity.config.schema import Config, IndexConfig
from raggity.core.errors import ModelError
from raggity.evaluation.calibration import Fit, Signal, fit
from raggity.evaluation.calibration_set import load_calibration_set
from raggity.evaluation.calibration_store import (
    Calibration,
    SignalLog,
    signal_log,
    write_model_calibration,
)
from raggity.models.hashing import cache_home
from raggity.pipeline.answer.prompt import PROMPT_VERSION
from raggity.pipeline.answer.thresholds import generator_name, generator_sha256
from raggity.pipeline.model_loading import Models, with_generation_model

# The shipped set's name in signal logs: a new set, or a new prompt, starts a new log.
SET_NAME = "squad2-v1"

# (done, total): one call per question, before the first and after each.
CalibrationProgress = Callable[[int, int], None]


@dataclass(frozen=True)
class CalibrationRun:
    calibration: Calibration
    stored_at: Path
    # Questions whose signals were read in this run (the rest came from the log of an earlier one).
    new_questions: int


def calibration_config(config: Config, model: str | None) -> Config:
    """The config with `model` (a generation model's name) in place of the configured one."""
    return with_generation_model(config, model) if model else config


def require_sha(config: Config) -> str:
    sha = generator_sha256(config)
    if sha is None:
        raise ModelError(
            f"generation model {generator_name(config)!r} cannot be found, so it cannot be calibrated",
            "run `rag models` to see where it resolves, or name another with --model",
        )
    return sha


def collect(
    session: Raggity,
    questions: Sequence[tuple[str, str]],
    log: SignalLog,
    progress: CalibrationProgress,
    *,
    without: Mapping[str, str] | None = None,
) -> tuple[dict[str, list[Signal]], int]:
    """Signals of each (group, question), read or taken from `log`, by group; and how many were
    read now. The model loads only when a question is not in the log. `without`: a question's file
    whose chunks are left out of its sources (see signal_row)."""
    asking: Raggity | None = None
    groups: dict[str, list[Signal]] = {}
    new = 0
    progress(0, len(questions))
    with log.appending() as handle:
        for done, (group, question) in enumerate(questions, start=1):
            row = log.rows.get(question)
            if row is None:
                asking = asking or signals_session(session)
                row = signal_row(asking, question, without_source=(without or {}).get(question))
                log.add(handle, row)
                new += 1
            groups.setdefault(group, []).append(Signal.from_row(row))
            progress(done, len(questions))
    return groups, new


def calibrate_model(
    config: Config,
    *,
    model: str | None = None,
    per_group: int | None = None,
    progress: CalibrationProgress = lambda done, total: None,
    models: Models | None = None,
) -> CalibrationRun:
    """Fits and stores the model's pair on the shipped set (`per_group`: its first N questions of
    each group, for a quick run; None: all of them). `models`: the models to calibrate with
    (default: the ones the config names)."""
    config = calibration_config(config, model)
    sha = require_sha(config)
    shipped = load_calibration_set()
    models = models or Models(config)
    session = Raggity(_on_calibration_index(config, models.embedder_identity), models=models)
    session.index_documents(shipped.passages)
    questions = [(q.group, q.question) for q in shipped.limited(per_group)]
    started = time.perf_counter()
    log = SignalLog(signal_log(sha, f"{SET_NAME}.{settings_key(config, models.embedder_identity)}"))
    groups, new = collect(session, questions, log, progress)
    fitted = fit(groups, [config.retrieval.sufficiency_floor])
    calibration = fitted_calibration(config, sha, groups, fitted, scope="model", started=started)
    return CalibrationRun(calibration, write_model_calibration(calibration), new)


def fitted_calibration(
    config: Config,
    sha: str,
    groups: Mapping[str, Sequence[Signal]],
    fitted: Fit,
    *,
    scope: str,
    started: float,
) -> Calibration:
    """What is stored of a fit: the pair, the model and prompt it holds for, and how it was fitted
    (`started`: the run's perf_counter at its start)."""
    return Calibration(
        model=generator_name(config),
        sha256=sha,
        calibrated_at=now_iso(),
        prompt_version=PROMPT_VERSION,
        sufficiency_floor=fitted.sufficiency_floor,
        min_coverage=fitted.min_coverage,
        max_refusal_probability=fitted.max_refusal_probability,
        n={name: len(rows) for name, rows in groups.items()},
        declined=dict(fitted.declined),
        scope=scope,
        seconds=round(time.perf_counter() - started, 1),
    )


def settings_key(config: Config, embedder: str) -> str:
    """What a signal depends on besides the model and the question: the prompt version, the
    embedder, retrieval's settings and the source budget. A change starts a new log."""
    g = config.generation
    what = f"{PROMPT_VERSION}|{embedder}|{config.retrieval!r}|{g.source_tokens}|{g.max_tokens}"
    return f"prompt{PROMPT_VERSION}-{hashlib.sha256(what.encode()).hexdigest()[:12]}"


def _on_calibration_index(config: Config, embedder: str) -> Config:
    """The config, indexing into the calibration set's own folder: one per embedder (its vectors
    are that embedder's), kept under the cache so a second run embeds nothing."""
    folder = cache_home() / "calibration-index" / hashlib.sha256(embedder.encode()).hexdigest()[:16]
    return replace(config, index=IndexConfig(str(folder)))


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
