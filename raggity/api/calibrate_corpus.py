"""`rag calibrate --corpus`: the cosine and coverage floors and the refusal ceiling, fitted on this
index for this model.

The shipped set is Wikipedia; a ceiling fitted there refused documentation questions the docs
answer. Here the answerable questions are written by the model from the index's own chunks (a fixed
sample), and a question is kept only when the chunk it came from is among those retrieved for it and
holds the answer it gave (most of its words, see holds_answer): a question retrieval cannot find, or
one whose answer the chunk does not say, is no answerable question of this index. The questions to
decline are of two kinds: each kept question asked again with its own file's chunks taken out of the
sources ("answer_removed": on-topic sources that do not hold the answer, as SQuAD's unanswerable
questions are in the model's calibration), and the shipped set's unrelated ones (about Wikipedia
articles no index here holds). The first kind is what holds the ceiling down: on documentation a
fit without it chose a ceiling of 1.0, which switches the model's judgement off. A question whose
answer another file also holds is declined at no cost to the fit, so that kind errs strict.

Two steps, each by the principle of evaluation/calibration.py (at most 5% of the answerable
questions declined). First the topic gates, the cosine and coverage floors, on the answerable and
unrelated questions alone (fit_floors): the model's floors were fitted on Wikipedia paragraphs,
where the cosine floor was not fitted, and on documentation they fail both ways (on 55 of git's
pages with the 0.5B model, the coverage floor 0.4 refused 3 of 17 answerable FAQ questions, and the
model's pair at the cosine floor 0.25 let through 3 of 17 of Django's FAQ questions, which this
index's fitted cosine floor, 0.41, declines: see docs/answers.md). The answer-removed questions are
left out of this step: they are about this index, so no topic gate can tell them apart, and they
would push a floor into the answerable ones. Then the ceiling above those floors, on every group,
where each kept question counts by the answer the model gives it (generated once, thresholds off,
logged): one whose answer says its written answer is "answerable", the group whose declines the 5%
budget limits; one shown as verified that does not is "answered_wrong", a group to decline like the
unrelated ones; one the answer's own checks decline anyway counts in neither, since the thresholds
change nothing a user sees for it. The budget is so spent on answers that would be right, and a
ceiling that declines wrong answers the model would show as verified is worth as much as one that
declines unrelated questions: on documentation the old fit, which counted every kept question as
answerable, chose a ceiling of 1.0 and let through FAQ questions the 0.5B model answered wrongly but
verified (docs/answers.md). Format 2 of the stored entry (CORPUS_FORMAT) holds the fitted cosine
floor, which `rag ask` then uses in place of [retrieval] sufficiency_floor where it is higher; an
entry of format 1 fitted the ceiling alone.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, TextIO

from raggity.api.calibrate import (
    CalibrationProgress,
    CalibrationRun,
    calibration_config,
    collect,
    fitted_calibration,
    require_sha,
    settings_key,
)
from raggity.api.calibration_signals import answer_row, signal_row, signals_session
from raggity.api.session import Raggity
from raggity.config.schema import Config
from raggity.core.errors import RaggityError
from raggity.core.protocols import Generator
from raggity.core.types import Chunk
from raggity.evaluation.calibration import (
    ANSWERABLE,
    Signal,
    cosine_floors,
    fit,
    fit_floors,
)
from raggity.evaluation.calibration_set import load_calibration_set
from raggity.evaluation.calibration_store import (
    CORPUS_FORMAT,
    SignalLog,
    signal_log,
    write_corpus_calibration,
)
from raggity.pipeline.answer.citations import claim_words, without_markers
from raggity.pipeline.model_loading import Models
from raggity.store.layout import IndexLayout

CORPUS_PER_GROUP = 40
# The group of kept questions asked without their own file's chunks.
ANSWER_REMOVED = "answer_removed"
# The group of kept questions whose answer is shown as verified but does not say the written answer.
ANSWERED_WRONG = "answered_wrong"
# Fewer kept questions than this fit nothing worth storing.
MIN_ANSWERABLE = 10
# Fewer kept questions answered right than this leave the budget nothing to keep.
MIN_RIGHT = 5
# Chunks tried per question wanted: some give no question, or one retrieval does not find.
TRIES_PER_QUESTION = 3
# Enough of a chunk for a question; a long one is cut (the model reads it whole otherwise).
PASSAGE_CHARS = 1500
SEED = 0
# Share of an answer's words its chunk must hold, where it does not hold the answer word for word.
ANSWER_WORDS_HELD = 0.8
# Share of the written answer's words the model's reply must hold to count as right: half, as a
# documentation answer is judged right with half its key facts (bench/docs_questions.py). The written
# answer is often a sentence or two and the reply gives its core: at 0.8, 5 of the 6 replies the 1.5B
# model gave on git's pages that counted as wrong said what their chunk says in other words.
REPLY_WORDS_HELD = 0.5
QUESTION_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
    "required": ["question", "answer"],
}
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class KeptQuestion:
    """A written question that counts as answerable: its chunk, the question, and its signals."""

    chunk: Chunk
    question: str
    answer: str  # the answer the model wrote with it, which its chunk holds
    signal: Signal


@dataclass(frozen=True)
class WrittenQuestion:
    chunk_id: str
    question: str
    answer: str


def question_messages(text: str) -> list[dict[str, str]]:
    return [
        {
            "role": "system",
            "content": "You write one question a user of these documents might ask, and its answer.",
        },
        {
            "role": "user",
            "content": f"Passage:\n{text[:PASSAGE_CHARS]}\n\nWrite one question that this passage answers, "
            "without naming the passage, and its answer: a short phrase copied exactly from the "
            'passage. Reply in JSON: {"question": "...", "answer": "..."}',
        },
    ]


def write_question(generator: Generator, chunk: Chunk) -> WrittenQuestion | None:
    """A question the model writes from `chunk`, or None when its reply is not one."""
    reply = "".join(
        generator.stream(
            question_messages(chunk.text), max_tokens=160, temperature=0.0, json_schema=QUESTION_SCHEMA
        )
    )
    try:
        data = json.loads(reply)
        question, answer = str(data["question"]).strip(), str(data["answer"]).strip()
    except (ValueError, KeyError, TypeError):
        return None
    if not question.endswith("?") or not answer:
        return None
    return WrittenQuestion(chunk.id, question, answer)


def holds_answer(chunk: Chunk, answer: str) -> bool:
    """Whether the chunk says the answer (see says). An answer the chunk does not hold was made up,
    and its question is not one this chunk answers."""
    return says(chunk.text, answer)


def says(text: str, answer: str, share: float = ANSWER_WORDS_HELD) -> bool:
    """Whether `text` says the answer: word for word (case and spacing aside), or with at least
    `share` of its content words and options (a small model answers in a sentence of its own: "It
    defaults to true." from "Defaults to true."). The same rule tells whether a chunk holds a
    written answer and (at REPLY_WORDS_HELD) whether the model's reply to the question gives it."""
    flat = _SPACE.sub(" ", answer).strip().lower()
    if not flat:
        return False
    # Whole words, markers aside: the answer "2" is not said by "[2]" or "v2.1", nor "N" by any
    # word with an n.
    text = without_markers(text)
    if re.search(rf"(?<!\w){re.escape(flat)}(?!\w)", _SPACE.sub(" ", text).lower()):
        return True
    words = claim_words(answer)
    return bool(words) and len(words & claim_words(text)) / len(words) >= share


def calibrate_corpus(
    config: Config,
    *,
    model: str | None = None,
    per_group: int | None = None,
    progress: CalibrationProgress = lambda done, total: None,
    models: Models | None = None,
) -> CalibrationRun:
    """Fits and stores this index's ceiling for the model (`per_group`: questions of each group,
    default CORPUS_PER_GROUP). `models`: as calibrate_model's."""
    config = calibration_config(config, model)
    if config.index_location.on_object_store:
        raise RaggityError(
            "rag calibrate --corpus works on a local index only", "run it on a local copy of the index"
        )
    sha = require_sha(config)
    wanted = per_group or CORPUS_PER_GROUP
    session = Raggity(config, models=models or Models(config))
    layout = IndexLayout(config.index_dir).require()
    started = time.perf_counter()
    kind = f"corpus-{hashlib.sha256(str(layout.root.resolve()).encode()).hexdigest()[:16]}"
    log = SignalLog(signal_log(sha, f"{kind}.{settings_key(config, session.models.embedder_identity)}"))
    written = SignalLog(signal_log(sha, f"{kind}.written"), key="chunk_id")
    removed_log = SignalLog(
        signal_log(sha, f"{kind}.removed.{settings_key(config, session.models.embedder_identity)}")
    )
    answers_log = SignalLog(
        signal_log(sha, f"{kind}.answers.{settings_key(config, session.models.embedder_identity)}")
    )
    logged = len(log.rows) + len(removed_log.rows)
    kept = _answerable(session, wanted, log, written, progress)
    answerable = [item.signal for item in kept]
    if len(answerable) < MIN_ANSWERABLE:
        raise RaggityError(
            f"only {len(answerable)} questions written from this index were found by retrieval in its "
            f"answering chunk; at least {MIN_ANSWERABLE} are needed",
            "raise --limit, or use the model's calibration (`rag calibrate`)",
        )
    unrelated = [("out_of_corpus", q.question) for q in load_calibration_set().of_group("out_of_corpus")]
    groups, _ = collect(session, unrelated[:wanted], log, progress)
    groups[ANSWERABLE] = answerable
    removed, _ = collect(
        session,
        [(ANSWER_REMOVED, item.question) for item in kept],
        removed_log,
        progress,
        without={item.question: item.chunk.source for item in kept},
    )
    groups[ANSWER_REMOVED] = removed[ANSWER_REMOVED]
    floors = fit_floors(
        answerable,
        groups["out_of_corpus"],
        cosine_floors(groups, config.retrieval.sufficiency_floor),
    )
    right, wrong = _by_answer(session, kept, answers_log, progress)
    if len(right) < MIN_RIGHT:
        raise RaggityError(
            f"the model answered only {len(right)} of the {len(kept)} questions written from this index "
            f"with their answer; at least {MIN_RIGHT} are needed to fit what to keep",
            "raise --limit, or use the model's calibration (`rag calibrate`)",
        )
    groups[ANSWERABLE] = right
    if wrong:
        groups[ANSWERED_WRONG] = wrong
    # The coverage floor stays the topic gate's: searched here too, it rose to 0.6 on git's pages
    # with the 0.5B model, declining questions asked without their file (the written questions copy
    # their chunk's words, so their coverage falls with it) and refusing 4 more of 17 FAQ questions.
    fitted = fit(groups, [floors.sufficiency_floor], coverage_floors=(floors.min_coverage,))
    calibration = replace(
        fitted_calibration(config, sha, groups, fitted, scope="corpus", started=started), format=CORPUS_FORMAT
    )
    stored = write_corpus_calibration(layout.calibration, calibration)
    return CalibrationRun(calibration, stored, len(log.rows) + len(removed_log.rows) - logged)


def _by_answer(
    session: Raggity, kept: list[KeptQuestion], log: SignalLog, progress: CalibrationProgress
) -> tuple[list[Signal], list[Signal]]:
    """The signals of the kept questions whose answer (generated, or read from `log`) says their
    written answer (half its words will do), and of those whose answer is shown as verified but does
    not. An answer the answer's own checks decline is in neither."""
    right: list[Signal] = []
    wrong: list[Signal] = []
    progress(0, len(kept))
    with log.appending() as handle:
        for done, item in enumerate(kept, start=1):
            row = log.rows.get(item.question)
            if row is None:
                row = answer_row(session, item.question)
                log.add(handle, row)
            shown = not row.get("declined")
            if shown and says(str(row.get("text", "")), item.answer, REPLY_WORDS_HELD):
                right.append(item.signal)
            elif shown and row.get("verified"):
                wrong.append(item.signal)
            progress(done, len(kept))
    return right, wrong


def _answerable(
    session: Raggity, wanted: int, log: SignalLog, written: SignalLog, progress: CalibrationProgress
) -> list[KeptQuestion]:
    """Signals of up to `wanted` questions written from a fixed sample of the index's chunks, each
    kept only when retrieval finds its chunk and the chunk holds its answer."""
    snapshot = session.searcher.snapshot
    snapshot.refresh()  # readers open at the last committed manifest
    ids = sorted(snapshot.live)
    sample = random.Random(SEED).sample(ids, min(len(ids), wanted * TRIES_PER_QUESTION))
    asking: Raggity | None = None
    kept: list[KeptQuestion] = []
    progress(0, len(sample))
    with log.appending() as signals, written.appending() as writes:
        for done, chunk_id in enumerate(sample, start=1):
            if len(kept) >= wanted:
                break
            chunk = snapshot.table.fetch([chunk_id]).get(chunk_id)
            if chunk is not None:
                asking = asking or signals_session(session)
                question = _kept_question(session, asking, chunk.chunk, log, signals, written, writes)
                if question is not None:
                    kept.append(question)
            progress(done, len(sample))
    return kept


def _kept_question(
    session: Raggity,
    asking: Raggity,
    chunk: Chunk,
    log: SignalLog,
    signals: TextIO,
    written: SignalLog,
    writes: TextIO,
) -> KeptQuestion | None:
    row = written.rows.get(chunk.id)
    if row is None:
        question = write_question(session.models.generator, chunk)
        row = {
            "chunk_id": chunk.id,
            "question": question and question.question,
            "answer": question and question.answer,
        }
        written.add(writes, row)
    if not row.get("question") or not holds_answer(chunk, str(row.get("answer") or "")):
        return None
    asked = str(row["question"])
    signals_row = log.rows.get(asked)
    if signals_row is None:
        signals_row = signal_row(asking, asked)
        log.add(signals, signals_row)
    if not found_by_retrieval(chunk, signals_row):
        return None
    return KeptQuestion(chunk, asked, str(row["answer"]), Signal.from_row(signals_row))


def found_by_retrieval(chunk: Chunk, signals_row: Mapping[str, Any]) -> bool:
    """Whether the chunk a question was written from is among the sources retrieved for it: a
    question the index's own retrieval cannot answer from its chunk says nothing of the judgement."""
    return chunk.id in signals_row.get("chunks", ())
