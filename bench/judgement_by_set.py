"""What the model's judgement declines in each set, at the shipped thresholds and at other ceilings.

    python -m bench.judgement_by_set [--calibration bench/results/answerability.MODEL.json]
                                     [--docs NAME=DIAGNOSIS.jsonl ...]

The calibration file holds the signals of squad2-dev's calibration split (answerable, impossible)
and SciFact claims (out of corpus), as bench/calibrate_answerability.py read them; each --docs file
is a `python -m bench.docs_diagnose` output of a documentation set (answerable and out-of-corpus
questions, with the judgement's readings). For each refusal-probability ceiling it prints the share
of each set's groups that the cosine floor, the coverage floor and the ceiling together decline, so
that one can see whether any one ceiling serves all sets (issue #32.3: thresholds chosen over all
sets together, not per set).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from raggity.config.schema import GenerationConfig, RetrievalConfig
from raggity.pipeline.answer.answerability import thresholds_for

ROOT = Path(__file__).resolve().parent.parent
CEILINGS = (0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)


def declined(signal: dict[str, Any] | None, min_coverage: float, ceiling: float) -> bool:
    """`signal` None: declined before the model was asked (the cosine floor, or a sample without one)."""
    if signal is None:
        return True
    p = signal["refusal_probability"]
    return signal["coverage"] < min_coverage or (p is not None and round(p, 4) > ceiling)


def squad_groups(path: Path, floor: float) -> dict[str, list[dict[str, Any] | None]]:
    signals = json.loads(path.read_text(encoding="utf-8"))["signals"]
    return {
        f"squad2-dev {name}": [
            s if s["best_cosine"] is not None and s["best_cosine"] >= floor else None for s in rows
        ]
        for name, rows in signals.items()
    }


def docs_groups(name: str, path: Path) -> dict[str, list[dict[str, Any] | None]]:
    groups: dict[str, list[dict[str, Any] | None]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        judgement = row.get("judgement") or {}
        signal = None
        if judgement.get("refusal_probability") is not None:
            signal = {
                "refusal_probability": judgement["refusal_probability"],
                "coverage": (row.get("coverage") or {}).get("coverage", 0.0),
            }
        groups.setdefault(f"{name} {row['group']}", []).append(signal)
    return groups


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    model = GenerationConfig.model
    parser.add_argument(
        "--calibration", type=Path, default=ROOT / "bench" / "results" / f"answerability.{model}.json"
    )
    parser.add_argument("--docs", action="append", default=[], help="NAME=DIAGNOSIS.jsonl")
    args = parser.parse_args(argv)
    groups = squad_groups(args.calibration, RetrievalConfig.sufficiency_floor)
    for item in args.docs:
        name, _, path = item.partition("=")
        groups.update(docs_groups(name, Path(path)))
    shipped = thresholds_for(model)
    ceilings = sorted({*CEILINGS, shipped.max_refusal_probability})
    width = max(len(g) for g in groups)
    print(f"{'declined at ceiling':{width}}  " + "  ".join(f"{c:>6}" for c in ceilings) + "   n")
    for group, rows in groups.items():
        shares = [sum(declined(r, shipped.min_coverage, c) for r in rows) / len(rows) for c in ceilings]
        print(f"{group:{width}}  " + "  ".join(f"{s:6.1%}" for s in shares) + f"  {len(rows):>3}")
    print(f"(coverage floor {shipped.min_coverage}; shipped ceiling {shipped.max_refusal_probability})")


if __name__ == "__main__":
    main()
