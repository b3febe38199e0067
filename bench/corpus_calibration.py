"""Documentation questions before and after `rag calibrate --corpus`, in one run, on the same signals and answers.

    python -m bench.corpus_calibration --config DOCS/raggity.toml \
        --questions SETS/git/beir/questions.jsonl --unrelated SETS/git/ooc/queries.jsonl \
        [--limit 17] [--corpus-limit 40] [--out /tmp/corpus-calibration.json]

The index the config names must hold the documentation (`rag ingest SETS/git/docs`, or a subset of
its pages; the sets come from `python -m bench.docs_questions build`). Each question's signals are read
once through the product's code (raggity/api/calibration_signals.py, thresholds off) and logged beside
--out, so a rerun resumes; then `rag calibrate --corpus` runs (its own questions are written from the
index's chunks; its unrelated ones are the shipped set's Wikipedia questions, not these), and both
settings decide on the same signals: before, the model's pair at the config's cosine floor; after,
the index's floors and ceiling. Every question that either setting lets through is answered once with
the thresholds off (the answer does not depend on them: they only decide whether it is given), logged
too, and scored by the key-facts rule of bench/docs_questions.py:

- answerable: right (not declined, half its key facts held), partly right (the lenient measure),
  refused (declined by the thresholds or by the answer's own checks; refused_by_thresholds: by the
  first, before anything is generated), and verified_wrong: answered,
  shown as verified (a sentence supported by a source), but not right;
- unrelated (the other set's FAQ questions, which these docs cannot answer): declined, and
  unrelated_verified: answered and shown as verified (every answer to them is wrong).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.docs_questions import judge, partly_right
from raggity.api import load_config
from raggity.api.calibrate_corpus import calibrate_corpus
from raggity.api.calibration_signals import answer_row, signal_row, signals_session
from raggity.api.session import Raggity
from raggity.evaluation.calibration import Signal, declined
from raggity.evaluation.calibration_store import SignalLog
from raggity.pipeline.answer.thresholds import ResolvedThresholds, resolve_thresholds


@dataclass(frozen=True)
class Question:
    group: str  # "answerable" or "unrelated"
    text: str
    facts: tuple[str, ...]
    all_facts: tuple[str, ...]


def _questions(path: Path, group: str, limit: int) -> list[Question]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    field = "question" if group == "answerable" else "text"
    return [
        Question(group, str(r[field]), tuple(r.get("key_facts", ())), tuple(r.get("all_facts", ())))
        for r in rows
        if not r.get("impossible", False)
    ][:limit]


Decide = Callable[[Signal], bool]


def deciding(resolved: ResolvedThresholds, configured_floor: float) -> Decide:
    t = resolved.thresholds
    floor = resolved.floor(configured_floor)
    return lambda s: declined(s, floor, t.min_coverage, t.max_refusal_probability)


def score(
    questions: list[Question], signals: Mapping[str, Signal], answers: Mapping[str, Any], decide: Decide
) -> dict[str, Any]:
    counts = dict.fromkeys(
        ("answerable", "right", "partly_right", "refused", "verified_wrong", "unrelated", "declined"), 0
    )
    counts["unrelated_verified"] = counts["refused_by_thresholds"] = 0
    for q in questions:
        counts[q.group] += 1
        by_thresholds = decide(signals[q.text])
        if by_thresholds or answers[q.text]["declined"]:  # the first: never generated
            counts["refused" if q.group == "answerable" else "declined"] += 1
            counts["refused_by_thresholds"] += by_thresholds and q.group == "answerable"
            continue
        answer = answers[q.text]
        if q.group == "unrelated":
            counts["unrelated_verified"] += bool(answer["verified"])
            continue
        right = judge(str(answer["text"]), False, q.facts)[0]
        counts["right"] += right
        counts["partly_right"] += partly_right(str(answer["text"]), False, q.all_facts)
        counts["verified_wrong"] += bool(answer["verified"]) and not right
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--unrelated", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=17)
    parser.add_argument("--corpus-limit", type=int, default=40)
    parser.add_argument("--out", type=Path, default=Path("/tmp/corpus-calibration.json"))
    args = parser.parse_args()

    config = load_config(args.config)
    questions = [
        *_questions(args.questions, "answerable", args.limit),
        *_questions(args.unrelated, "unrelated", args.limit),
    ]
    session = Raggity(config)
    log = SignalLog(args.out.with_suffix(".signals.jsonl"))
    with log.appending() as handle:
        asking: Raggity | None = None
        for q in questions:
            if q.text not in log.rows:
                asking = asking or signals_session(session)
                log.add(handle, signal_row(asking, q.text))
    signals = {q.text: Signal.from_row(log.rows[q.text]) for q in questions}
    floor = config.retrieval.sufficiency_floor
    before = resolve_thresholds(config, corpus=False)
    run = calibrate_corpus(config, per_group=args.corpus_limit, models=session.models)
    after = resolve_thresholds(config)
    settings = {"before": deciding(before, floor), "after": deciding(after, floor)}
    answers = SignalLog(args.out.with_suffix(".answers.jsonl"))
    with answers.appending() as handle:
        for q in questions:
            through = any(not decide(signals[q.text]) for decide in settings.values())
            # Declined by both: never generated (a rerun whose fit lets it through generates it).
            if through and "text" not in answers.rows.get(q.text, {}):
                answers.add(handle, answer_row(session, q.text))
    result = {
        "config": str(args.config),
        "model": config.generation.model_path or config.generation.model,
        "before": {
            "thresholds": before.summary,
            **score(questions, signals, answers.rows, settings["before"]),
        },
        "after": {"thresholds": after.summary, **score(questions, signals, answers.rows, settings["after"])},
        "corpus_calibration": {"n": dict(run.calibration.n), "declined": dict(run.calibration.declined)},
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
