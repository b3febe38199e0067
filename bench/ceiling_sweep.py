"""What the judgement's refusal ceiling costs and buys once the support stage backs it up.

    python -m bench.ceiling_sweep --beir SET --ooc OOC --index INDEX [--docs DOCS] [--per-group 12]
                                  [--seed 0] [--out FILE.jsonl] [-c raggity.toml]

The judgement declines before generating; the support stage (docs/answers.md, "No source, no
answer") declines afterwards a reply none of whose sentences has a source. This asks `rag eval
--answers`' sample of SET (and OOC as the out-of-corpus group) with the refusal ceiling off, so that
every question the coverage check lets through is answered, and records each one's refusal
probability, whether the support stage declined it, and whether it was correct. From that it prints,
for each ceiling, what the pipeline would decline and answer right with that ceiling, with and
without the support stage. DOCS: index that folder through `rag ingest` (a docs_questions set's
docs/, whose citations are then named relative to it), else SET's corpus is indexed.

This is a measurement on evaluation samples, not a calibration: thresholds are chosen on the
calibration split (bench/calibrate_answerability.py).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from bench.docs_ask import relative_citations
from raggity.api.evaluate import corpus_documents
from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.config.schema import IndexConfig
from raggity.core.trace import TraceRecorder
from raggity.evaluation.answer_run import sample_cases, score_answer
from raggity.evaluation.dataset import load_beir
from raggity.pipeline.answer.answerability import Thresholds

CEILINGS = (0.5, 0.5813, 0.6, 0.65, 0.7, 0.75, 0.8, 1.0)


def outcome(row: dict[str, Any], ceiling: float, *, support: bool) -> tuple[bool, bool]:
    """(declined, correct) of `row` had the pipeline run with `ceiling` (and the support stage or not)."""
    p = row["refusal_probability"]
    judged = p is not None and round(p, 4) > ceiling
    declined = judged or row["declined_before_judgement"] or (support and row["unsupported"])
    return declined, bool(row["correct"]) and not declined


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--beir", type=Path, required=True)
    parser.add_argument("--ooc", type=Path, required=True)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--docs", type=Path)
    parser.add_argument("--per-group", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("-c", "--config", type=Path)
    args = parser.parse_args()
    dataset = load_beir(args.beir)
    cases = sample_cases(dataset.questions, load_beir(args.ooc).queries, args.per_group, args.seed)
    config = load_config(args.config)
    session = Raggity(replace(config, index=IndexConfig(str(args.index.resolve())), source=config.source))
    if args.docs is not None:
        session.ingest([args.docs])
    else:
        session.index_documents(corpus_documents(dataset))
    settings = session.settings()
    off = replace(settings, answerability=Thresholds(settings.answerability.min_coverage, 1.0))
    rows = []
    for case in cases:
        trace = TraceRecorder()
        answer = session.answer(
            case.question,
            session.searcher.retrieve(case.question, trace),
            trace,
            settings=off,
            use_cache=False,
        )
        named = relative_citations(answer, args.docs) if args.docs is not None else answer
        record = score_answer(case, named, None, 0.0)
        judgement = next((t.detail for t in answer.trace if t.stage == "model-judgement"), {})
        rows.append(
            {
                **asdict(record),
                "refusal_probability": judgement.get("refusal_probability"),
                # Abstained, or declined by the coverage floor, or no usable answer: the ceiling is moot.
                "declined_before_judgement": record.declined and not record.unsupported,
            }
        )
        print(f"{case.group:14} p={judgement.get('refusal_probability')} {case.question[:60]}", flush=True)
    if args.out is not None:
        args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    for support in (False, True):
        print(f"\nwith the support stage: {support}   (declined / correct, per group)")
        for ceiling in CEILINGS:
            cells = []
            for group in dict.fromkeys(r["group"] for r in rows):
                mine = [outcome(r, ceiling, support=support) for r in rows if r["group"] == group]
                n = len(mine)
                cells.append(f"{group} {sum(d for d, _ in mine)}/{n} {sum(c for _, c in mine)}/{n}")
            print(f"  ceiling {ceiling:<6}  " + "   ".join(cells))


if __name__ == "__main__":
    main()
