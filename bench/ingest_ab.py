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
import tempfile
from pathlib import Path
from typing import Any

from bench.ingest_docs import ROOT, ingest_folder
from bench.run import ingest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--scifact", action="store_true")
    parser.add_argument("--docs", type=Path, action="append", default=[])
    args = parser.parse_args()
    workloads: dict[str, Any] = {}
    if args.scifact:
        # The checkout's own bench.ingest_scifact, as `make bench` runs it there.
        workloads["scifact"] = lambda code, work: ingest(work / "index", code)
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
