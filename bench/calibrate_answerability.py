"""Calibrates the answerability thresholds (raggity/pipeline/answer/answerability.py) on shared data.

Signals are collected by the real ask pipeline with its thresholds switched off, on a calibration
split chosen by hashing question ids (sha256(id)[0] % 4 == 0), so that any evaluation sample drawn
from the rest never overlaps it:
- answerable squad2-dev questions, and on-topic unanswerable ones ("impossible"), asked of the
  squad2-dev paragraphs;
- SciFact claims asked of the same squad2-dev index (out of corpus).
The model generates nothing here: only the refusal probability is read from the judgement's prompts.
The answer prompt offers no refusal, so the rates calibrated here are the rates `rag ask` declines
at, apart from rare replies that are no answer (docs/answers.md).

The lab's groups (the whole squad2-dev index, SciFact claims) differ from the set `rag calibrate`
ships (SciFact's licence forbids shipping it); the signals are read and the pair is fitted by the
product's own code (raggity/api/calibration_signals.py, raggity/evaluation/calibration.py), so the
same signals give the same pair in both: `--refit` fits the stored signals of
bench/results/answerability.<model>.json again without the model.

Principle: the thresholds are the pair (coverage floor, refusal-probability ceiling) that declines the
most unanswerable and out-of-corpus questions (mean of the two rates) while declining at most 5% of the
answerable ones in all, cosine floor included. Ties go to the more lenient pair. The pair is chosen
at the configured cosine floor ([retrieval] sufficiency_floor), the one that ships. --search-floor
searches the floor with the pair, to show which floors tie and what a floor costs; when it picks
another floor, run again without it (the signals are reused, so that takes seconds) for the pair
at the configured floor, or change the default floor in the same reviewed commit.

    python -m bench.calibrate_answerability [--per-group 400] [--model NAME] [--search-floor]
    python -m bench.calibrate_answerability --model NAME --refit

Writes bench/results/answerability.<model>.json; the pair chosen goes into CALIBRATED in
raggity/pipeline/answer/answerability.py by hand, so that a change of thresholds is a reviewed commit.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from raggity.api.calibration_signals import signal_row, signals_session
from raggity.api.evaluate import corpus_documents
from raggity.api.session import Raggity
from raggity.config.schema import Config, GenerationConfig, IndexConfig
from raggity.evaluation.calibration import MAX_ANSWERABLE_DECLINED, Fit, Signal, fit, rate
from raggity.evaluation.calibration_split import in_calibration_split
from raggity.evaluation.dataset import load_beir
from raggity.pipeline.answer.answerability import CALIBRATED
from raggity.pipeline.answer.prompt import PROMPT_VERSION

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("RAGGITY_SHARED_EVAL", "/work/shared/eval"))
RESULTS = ROOT / "bench" / "results"


def fit_rows(groups: dict[str, list[dict[str, Any]]], floors: Sequence[float]) -> Fit:
    """The product's fit (raggity/evaluation/calibration.py) on stored signal rows."""
    return fit({name: [Signal.from_row(r) for r in rows] for name, rows in groups.items()}, floors)


def refit(model: str) -> dict[str, Any]:
    """The product's fitter on the stored signals of `model`, beside the pair stored with them and
    the pair that ships."""
    stored = json.loads((RESULTS / f"answerability.{model}.json").read_text(encoding="utf-8"))
    fitted = fit_rows(stored["signals"], [stored["sufficiency_floor"]])
    pair = {"min_coverage": fitted.min_coverage, "max_refusal_probability": fitted.max_refusal_probability}
    shipped = CALIBRATED.get(model)
    return {
        "model": model,
        "per_group": stored["per_group"],
        "refit": pair,
        "declined": dict(fitted.declined),
        "stored": stored["chosen"],
        "shipped": None if shipped is None else asdict(shipped),
        "same_as_stored": pair == stored["chosen"]
        and dict(fitted.declined) == stored["declined_with_chosen"],
        "same_as_shipped": shipped is not None and pair == asdict(shipped),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-group", type=int, default=400)
    parser.add_argument("--model", default=GenerationConfig.model)
    parser.add_argument("--index", type=Path, default=Path("/tmp/raggity-squad2-index"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--search-floor",
        action="store_true",
        help="search [retrieval] sufficiency_floor with the pair, to see which floors tie",
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="llama.cpp threads (1 is fastest on a shared machine)"
    )
    parser.add_argument(
        "--refit",
        action="store_true",
        help="fit the signals stored in bench/results/answerability.<model>.json again (no model runs) "
        "and compare with the stored pair and CALIBRATED",
    )
    args = parser.parse_args()
    if args.refit:
        print(json.dumps(refit(args.model), indent=1))
        return

    squad = load_beir(SHARED / "squad2-dev")
    claims = [q for q in load_beir(SHARED / "scifact").queries if in_calibration_split(q.id)]
    split = [q for q in squad.questions if in_calibration_split(q.id)]
    rng = random.Random(args.seed)
    picks = {
        "answerable": rng.sample([q.question for q in split if not q.impossible], args.per_group),
        "impossible": rng.sample([q.question for q in split if q.impossible], args.per_group),
        "out_of_corpus": rng.sample([q.text for q in claims], min(args.per_group, len(claims))),
    }
    config = Config()
    config = replace(
        config,
        index=IndexConfig(str(args.index.resolve())),
        generation=replace(config.generation, model=args.model, threads=args.threads),
    )
    session = Raggity(config, warn=lambda _: None)
    if not args.index.exists():
        session.index_documents(corpus_documents(squad))
    session = signals_session(session)
    started = time.perf_counter()
    RESULTS.mkdir(parents=True, exist_ok=True)
    # Signals already collected for this model and index (an interrupted run resumes from them).
    # Signals depend on the prompt, so a new prompt version starts a new log.
    done_file = RESULTS / f"answerability.{args.model}.prompt{PROMPT_VERSION}.jsonl"
    done = {}
    if done_file.exists():
        done = {
            row["question"]: row
            for row in map(json.loads, done_file.read_text(encoding="utf-8").splitlines())
        }
    groups: dict[str, list[dict[str, Any]]] = {name: [] for name in picks}
    with done_file.open("a", encoding="utf-8") as log:
        # Round robin over the groups, so that an interrupted run holds the same number of each group.
        for i in range(args.per_group):
            for name, questions in picks.items():
                if i >= len(questions):
                    continue
                question = questions[i]
                if question not in done:
                    done[question] = signal_row(session, question)
                    log.write(json.dumps(done[question]) + "\n")
                    log.flush()
                groups[name].append(done[question])
            print(i + 1, f"{time.perf_counter() - started:.0f}s", flush=True)
    configured = config.retrieval.sufficiency_floor
    floors = [round(0.05 * k, 2) for k in range(11)] if args.search_floor else [configured]
    fitted = fit_rows(groups, floors)
    floor = fitted.sufficiency_floor
    result = {
        "principle": "most impossible + out-of-corpus declined, declining at most "
        f"{MAX_ANSWERABLE_DECLINED:.0%} of the answerable questions",
        "split": "sha256(question id)[0] % 4 == 0",
        "model": args.model,
        "prompt_version": PROMPT_VERSION,
        "per_group": {name: len(rows) for name, rows in groups.items()},
        "sufficiency_floor": floor,
        "sufficiency_floor_searched": args.search_floor,
        "chosen": {
            "min_coverage": fitted.min_coverage,
            "max_refusal_probability": fitted.max_refusal_probability,
        },
        "declined_with_chosen": dict(fitted.declined),
        "declined_by_cosine_floor_alone": {
            n: round(rate([Signal.from_row(x) for x in r], floor, 0.0, 1.0), 4) for n, r in groups.items()
        },
        "seconds": round(time.perf_counter() - started, 1),
        "signals": groups,
    }
    (RESULTS / f"answerability.{args.model}.json").write_text(
        json.dumps(result, indent=1) + "\n", encoding="utf-8"
    )
    print(json.dumps({k: v for k, v in result.items() if k != "signals"}, indent=1))


if __name__ == "__main__":
    main()
