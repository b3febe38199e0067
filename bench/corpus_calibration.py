"""Declines on documentation before and after `rag calibrate --corpus`, in one run, on the same signals.

    python -m bench.corpus_calibration --config DOCS/raggity.toml \
        --questions SETS/git/beir/questions.jsonl --unrelated SETS/git/ooc/queries.jsonl \
        [--limit 17] [--corpus-limit 40] [--out /tmp/corpus-calibration.json]

The index the config names must hold the documentation (`rag ingest SETS/git/docs`; the sets come
from `python -m bench.docs_questions build`). Each question's signals are read once through the
product's code (raggity/api/calibration_signals.py, thresholds off, nothing generated) and logged
beside --out, so a rerun resumes; then `rag calibrate --corpus` runs (its own questions are written
from the index's chunks; its unrelated ones are the shipped set's Wikipedia questions, not these),
and both pairs are applied to the same signals: the model's (before) and the index's (after). It
measures declines only: answerable FAQ questions declined, and the other set's FAQ questions
(unrelated to these docs) declined. Whether an answer is right, or shown as verified and wrong, needs
generation and is not measured here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from raggity.api import load_config
from raggity.api.calibrate_corpus import calibrate_corpus
from raggity.api.calibration_signals import signal_row, signals_session
from raggity.api.session import Raggity
from raggity.evaluation.calibration import Signal, rate
from raggity.evaluation.calibration_store import SignalLog
from raggity.pipeline.answer.thresholds import resolve_thresholds


def _questions(path: Path, field: str, limit: int) -> list[str]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [str(r[field]) for r in rows if not r.get("impossible", False)][:limit]


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
    groups = {
        "answerable": _questions(args.questions, "question", args.limit),
        "unrelated": _questions(args.unrelated, "text", args.limit),
    }
    log = SignalLog(args.out.with_suffix(".signals.jsonl"))
    session = Raggity(config)
    asking: Raggity | None = None
    signals: dict[str, list[Signal]] = {}
    with log.appending() as handle:
        for name, questions in groups.items():
            for question in questions:
                if question not in log.rows:
                    asking = asking or signals_session(session)
                    log.add(handle, signal_row(asking, question))
                signals.setdefault(name, []).append(Signal.from_row(log.rows[question]))
    before = resolve_thresholds(config, corpus=False)
    run = calibrate_corpus(config, per_group=args.corpus_limit, models=session.models)
    after = resolve_thresholds(config)
    floor = config.retrieval.sufficiency_floor

    def declined(pair: Any) -> dict[str, float]:
        t = pair.thresholds
        return {
            n: round(rate(s, floor, t.min_coverage, t.max_refusal_probability), 4) for n, s in signals.items()
        }

    result = {
        "config": str(args.config),
        "questions": {n: len(s) for n, s in signals.items()},
        "before": {"thresholds": before.summary, "declined": declined(before)},
        "after": {"thresholds": after.summary, "declined": declined(after)},
        "corpus_calibration": {"n": dict(run.calibration.n), "declined": dict(run.calibration.declined)},
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
