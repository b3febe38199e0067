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

Principle: the thresholds are the pair (coverage floor, refusal-probability ceiling) that declines the
most unanswerable and out-of-corpus questions (mean of the two rates) while declining at most 5% of the
answerable ones in all, cosine floor included. Ties go to the more lenient pair. The pair is chosen
at the configured cosine floor ([retrieval] sufficiency_floor), the one that ships. --search-floor
searches the floor with the pair, to show which floors tie and what a floor costs; when it picks
another floor, run again without it (the signals are reused, so that takes seconds) for the pair
at the configured floor, or change the default floor in the same reviewed commit.

    python -m bench.calibrate_answerability [--per-group 400] [--model NAME] [--search-floor]

Writes bench/results/answerability.<model>.json; the pair chosen goes into CALIBRATED in
raggity/pipeline/answer/answerability.py by hand, so that a change of thresholds is a reviewed commit.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from raggity.api.evaluate import corpus_documents
from raggity.api.session import Raggity
from raggity.config.schema import Config, GenerationConfig, IndexConfig
from raggity.core.protocols import Generator
from raggity.core.trace import TraceRecorder
from raggity.evaluation.calibration_split import in_calibration_split
from raggity.evaluation.dataset import load_beir
from raggity.pipeline.answer.answerability import Thresholds
from raggity.pipeline.answer.prompt import PROMPT_VERSION

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("RAGGITY_SHARED_EVAL", "/work/shared/eval"))
RESULTS = ROOT / "bench" / "results"
MAX_ANSWERABLE_DECLINED = 0.05
OFF = Thresholds(min_coverage=0.0, max_refusal_probability=1.0)


class SignalsOnly:
    """The real generator for the refusal probability; generates nothing after it."""

    def __init__(self, inner: Generator) -> None:
        self._inner = inner
        self.identity = inner.identity
        self.context_size = inner.context_size

    def count_tokens(self, text: str) -> int:
        return int(self._inner.count_tokens(text))

    def continuation_probability(
        self, messages: Sequence[dict[str, str]], text: str, *, fresh: bool = False
    ) -> float:
        return self._inner.continuation_probability(messages, text, fresh=fresh)

    def stream(self, messages: Sequence[dict[str, str]], **_: object) -> Iterator[str]:
        return iter(())


def signals(session: Raggity, question: str) -> dict[str, Any]:
    """`session` answers through SignalsOnly: the judgement is read, nothing is generated."""
    trace = TraceRecorder()
    candidates = session.searcher.retrieve(question, trace)
    settings = replace(session.settings(), sufficiency_floor=0.0, answerability=OFF)
    answer = session.answer(question, candidates, trace, settings=settings, use_cache=False)
    detail = {t.stage: t.detail for t in answer.trace}
    sources = [c.chunk.source for c in candidates[: settings.top_k]]
    return {
        "best_cosine": detail["abstain"]["best_cosine"],
        "coverage": detail.get("coverage", {}).get("coverage", 0.0),
        "refusal_probability": detail.get("model-judgement", {}).get("refusal_probability"),
        # Its two readings, kept to show what each tells apart on its own (docs/answers.md).
        "refusal_opening": detail.get("model-judgement", {}).get("refusal_opening"),
        "yes_no": detail.get("model-judgement", {}).get("yes_no"),
        "sources": sources,
    }


def declined(row: dict[str, Any], floor: float, thresholds: Thresholds) -> bool:
    p = row["refusal_probability"]
    return (
        row["best_cosine"] is None
        or row["best_cosine"] < floor
        or row["coverage"] < thresholds.min_coverage
        or (p is not None and p > thresholds.max_refusal_probability)
    )


def rate(rows: Sequence[dict[str, Any]], floor: float, thresholds: Thresholds) -> float:
    return sum(declined(r, floor, thresholds) for r in rows) / max(len(rows), 1)


def choose(
    groups: dict[str, list[dict[str, Any]]], cosine_floors: Sequence[float]
) -> tuple[float, Thresholds, dict[str, float]]:
    """The (cosine floor, coverage floor, refusal ceiling) that declines the most impossible and
    out-of-corpus questions while declining at most 5% of the answerable ones in all (or no more than
    the lowest cosine floor on offer already does, if that is more). Ties go to the more lenient."""
    probabilities = sorted({r["refusal_probability"] for rows in groups.values() for r in rows} - {None})
    ceilings = [1.0, *(p for p in probabilities if p >= 0.05)]
    coverage_floors = [round(0.05 * k, 2) for k in range(21)]
    lowest = min(cosine_floors)
    budget = max(MAX_ANSWERABLE_DECLINED, rate(groups["answerable"], lowest, OFF))
    best: tuple[tuple[float, float, float, float], float, Thresholds] | None = None
    for floor in cosine_floors:
        for coverage_floor in coverage_floors:
            for ceiling in ceilings:
                t = Thresholds(coverage_floor, ceiling)
                if rate(groups["answerable"], floor, t) > budget:
                    continue
                score = (rate(groups["impossible"], floor, t) + rate(groups["out_of_corpus"], floor, t)) / 2
                key = (score, -floor, -coverage_floor, ceiling)
                if best is None or key > best[0]:
                    best = (key, floor, t)
    assert best is not None  # (lowest floor, 0, 1.0) declines only what that floor declines
    _, floor, chosen = best
    return floor, chosen, {name: round(rate(rows, floor, chosen), 4) for name, rows in groups.items()}


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
    args = parser.parse_args()

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
    session = session.with_generator(SignalsOnly(session.models.generator))
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
                    done[question] = {"question": question, **signals(session, question)}
                    log.write(json.dumps(done[question]) + "\n")
                    log.flush()
                groups[name].append(done[question])
            print(i + 1, f"{time.perf_counter() - started:.0f}s", flush=True)
    configured = config.retrieval.sufficiency_floor
    floors = [round(0.05 * k, 2) for k in range(11)] if args.search_floor else [configured]
    floor, chosen, rates = choose(groups, floors)
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
            "min_coverage": chosen.min_coverage,
            "max_refusal_probability": chosen.max_refusal_probability,
        },
        "declined_with_chosen": rates,
        "declined_by_cosine_floor_alone": {n: round(rate(r, floor, OFF), 4) for n, r in groups.items()},
        "seconds": round(time.perf_counter() - started, 1),
        "signals": groups,
    }
    (RESULTS / f"answerability.{args.model}.json").write_text(
        json.dumps(result, indent=1) + "\n", encoding="utf-8"
    )
    print(json.dumps({k: v for k, v in result.items() if k != "signals"}, indent=1))


if __name__ == "__main__":
    main()
