"""The support stage applied to answers written before it existed: what "no source, no answer" changes.

    python -m bench.lab.support_replay DETAILS.jsonl [DETAILS.jsonl ...]

Each file holds `rag eval --answers --details` lines of a tree without the support stage
(docs/answers.md, "No source, no answer"). The stage runs after generation and changes nothing
before it, so the same run with it declines exactly the answered questions with no verified source
and is otherwise the same: this prints each group's figures both ways, and the questions that
change, so a run's "after" can be read from its "before" (and checked against a run of the new
tree: their per-question declines must agree).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def declined_after(record: dict[str, Any]) -> bool:
    return bool(record["declined"]) or not record["verified"]


def _share(count: int, n: int) -> str:
    return f"{count}/{n} ({count / n:.1%})" if n else "-"


def summary(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, str]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault(record["group"], []).append(record)
    table = {}
    for group, rows in groups.items():
        n = len(rows)
        scored = [r for r in rows if r["correct"] is not None]
        table[group] = {
            "declined before": _share(sum(bool(r["declined"]) for r in rows), n),
            "declined after": _share(sum(declined_after(r) for r in rows), n),
            "correct before": _share(sum(bool(r["correct"]) for r in scored), len(scored)),
            "correct after": _share(
                sum(bool(r["correct"]) and not declined_after(r) for r in scored), len(scored)
            ),
        }
    return table


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("details", type=Path, nargs="+")
    args = parser.parse_args(argv)
    for path in args.details:
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        print(path)
        for group, figures in summary(records).items():
            print(f"  {group}: " + ", ".join(f"{k} {v}" for k, v in figures.items()))
        for r in records:
            if declined_after(r) and not r["declined"]:
                said = " ".join(r["answer"].split())[:100]
                print(
                    f"    now declined ({r['group']}, correct={r['correct']}): {r['question'][:70]} -> {said}"
                )


if __name__ == "__main__":
    main()
