"""Cold `rag search`: one whole process per query, as a user starts it, timed from outside.

    python -m bench.cold_search --index DIR [--code TREE ...] [--runs 5]

`make bench` reports it for this checkout. With --code, each tree (a checkout or `git archive` of
another commit) runs the same query against the same index, taking turns, in one run, so that
commits are compared on one machine under the same load. Besides wall time, the CPU time the
process used: on a machine shared with other work, wall time mostly measures the wait for a core.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERY = "vitamin D deficiency and bone fractures"
# The `rag` entry point, run from the tree first on PYTHONPATH (the installed script's otherwise).
_RAG = "from raggity.cli.main import run; run()"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def search_once(config: Path, code: Path | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `rag search` process."""
    env = dict(os.environ) if code is None else dict(os.environ, PYTHONPATH=str(code))
    cpu, began = _children_cpu(), time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", _RAG, "--config", str(config), "search", QUERY],
        check=True,
        capture_output=True,
        env=env,
        cwd=tempfile.gettempdir() if code is not None else None,
    )
    return time.perf_counter() - began, _children_cpu() - cpu


def summary(times: list[tuple[float, float]]) -> dict[str, float]:
    walls = [wall for wall, _ in times]
    return {
        "median_s": statistics.median(walls),
        "min_s": min(walls),
        "max_s": max(walls),
        "cpu_median_s": statistics.median(cpu for _, cpu in times),
    }


def cold_search(config: Path, runs: int = 5) -> dict[str, float]:
    return summary([search_once(config) for _ in range(runs)])


def compare(config: Path, trees: list[Path], runs: int) -> dict[str, dict[str, float]]:
    """Each tree's figures, the trees taking turns so that a change of load falls on all of them."""
    times: dict[Path, list[tuple[float, float]]] = {tree: [] for tree in trees}
    for _ in range(runs):
        for tree in trees:
            times[tree].append(search_once(config, tree))
    return {str(tree): summary(found) for tree, found in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True, help="an index folder to search")
    parser.add_argument("--code", type=Path, action="append", default=[], help="a tree to time (repeat)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="raggity-cold-") as tmp:
        config = Path(tmp) / "raggity.toml"
        config.write_text(f"[index]\npath = {json.dumps(str(args.index.resolve()))}\n")
        if args.code:
            results = compare(config, [tree.resolve() for tree in args.code], args.runs)
        else:
            results = {"this checkout": cold_search(config, args.runs)}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
