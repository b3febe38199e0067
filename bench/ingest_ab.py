"""A/B ingest speed of this checkout against another one (e.g. a `git worktree` of an older commit),
on a shared machine: runs alternate old/new (and which goes first alternates each round), and the
result is the ratio of medians, with the load average before and after.

    python -m bench.ingest_ab OLD_CHECKOUT [--rounds 2] [--scifact] [--docs FOLDER ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.child import run_child
from bench.ingest_docs import ROOT, ingest_folder
from bench.run import SCIFACT


def scifact_run(code: Path, work: Path) -> dict[str, Any]:
    """The checkout's own bench.ingest_scifact, as `make bench` runs it there."""
    env = dict(os.environ, PYTHONPATH=str(code))
    run = run_child(
        [sys.executable, "-m", "bench.ingest_scifact", str(SCIFACT), str(work / "index")], cwd=code, env=env
    )
    result: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return {
        "chunks": result["chunks"],
        "tokens": result["tokens"],
        "wall_seconds": result["wall_seconds"],
        "tokens_per_s": result["tokens"] / result["wall_seconds"],
        "peak_rss_mb": run.peak_rss_mb,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--scifact", action="store_true")
    parser.add_argument("--docs", type=Path, action="append", default=[])
    args = parser.parse_args()
    workloads: dict[str, Any] = {}
    if args.scifact:
        workloads["scifact"] = scifact_run
    for folder in args.docs:
        workloads[str(folder)] = lambda code, work, folder=folder: ingest_folder(folder, work, code=code)
    sides = {"old": args.old.resolve(), "new": ROOT}
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {w: {"old": [], "new": []} for w in workloads}
    load_before = os.getloadavg()
    for k in range(args.rounds):
        for name, measure in workloads.items():
            for side in ("old", "new") if k % 2 == 0 else ("new", "old"):
                with tempfile.TemporaryDirectory(prefix="raggity-ab-") as tmp:
                    result = measure(sides[side], Path(tmp))
                runs[name][side].append(result)
                print(json.dumps({"round": k, "workload": name, "side": side, **result}), flush=True)
    summary = {
        name: {
            "new_vs_old_tokens_per_s": _median(sides_["new"], "tokens_per_s")
            / _median(sides_["old"], "tokens_per_s"),
            "old_tokens_per_s": _median(sides_["old"], "tokens_per_s"),
            "new_tokens_per_s": _median(sides_["new"], "tokens_per_s"),
            "old_peak_rss_mb": max(r["peak_rss_mb"] for r in sides_["old"]),
            "new_peak_rss_mb": max(r["peak_rss_mb"] for r in sides_["new"]),
        }
        for name, sides_ in runs.items()
    }
    print(
        json.dumps({"load_before": load_before, "load_after": os.getloadavg(), "summary": summary}, indent=2)
    )


def _median(results: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(float(r[key]) for r in results))


if __name__ == "__main__":
    main()
