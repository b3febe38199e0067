"""Cold `rag search`: one whole process per query, as a user starts it, timed from outside.

    python -m bench.cold_search --index DIR [--code TREE ...] [--query TEXT ...] [--runs 5]

`make bench` reports it for this checkout. With --code, each tree (a checkout or `git archive` of
another commit) runs the same queries against the same index, taking turns, in one run, so that
commits are compared on one machine under the same load. Besides wall time, the CPU time the
process used: on a machine shared with other work, wall time mostly measures the wait for a core.

"Cold" is a new process, as each `rag search` is, on a machine where raggity has run before: each
tree first runs every query once untimed, which writes what a first run leaves for the next (Python's
byte-code, the optimised ONNX model in the cache folder) and reads the index into the page cache.
Byte-code is written even where PYTHONDONTWRITEBYTECODE is set in the calling shell, as an installed
package has it. Each search's output is kept: `same_output` says whether every run of a tree printed
the same as the first tree's runs, query by query.
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
from typing import Any

QUERY = "vitamin D deficiency and bone fractures"
# The `rag` entry point, run from the tree first on PYTHONPATH (the installed script's otherwise).
_RAG = "from raggity.cli.main import run; run()"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _env(code: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return env if code is None else dict(env, PYTHONPATH=str(code))


def run_search(config: Path, query: str, code: Path | None = None) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds, what it printed) of one `rag search` process."""
    cpu, began = _children_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _RAG, "--config", str(config), "search", query],
        check=True,
        capture_output=True,
        env=_env(code),
        cwd=tempfile.gettempdir() if code is not None else None,
    )
    return time.perf_counter() - began, _children_cpu() - cpu, done.stdout


def summary(times: list[tuple[float, float]]) -> dict[str, Any]:
    walls = [wall for wall, _ in times]
    return {
        "median_s": statistics.median(walls),
        "min_s": min(walls),
        "max_s": max(walls),
        "cpu_median_s": statistics.median(cpu for _, cpu in times),
    }


def _timed(
    config: Path, trees: list[Path | None], queries: list[str], runs: int
) -> dict[Path | None, dict[str, Any]]:
    """Each tree's figures over `runs` turns of every query, the trees taking turns so that a change
    of load falls on all of them; `same_output` against the first tree's first run of each query."""
    expected = {query: run_search(config, query, trees[0])[2] for query in queries}
    for tree in trees[1:]:
        for query in queries:
            run_search(config, query, tree)
    times: dict[Path | None, list[tuple[float, float]]] = {tree: [] for tree in trees}
    same = dict.fromkeys(trees, True)
    for _ in range(runs):
        for query in queries:
            for tree in trees:
                wall, cpu, printed = run_search(config, query, tree)
                times[tree].append((wall, cpu))
                same[tree] = same[tree] and printed == expected[query]
    return {tree: {**summary(found), "same_output": same[tree]} for tree, found in times.items()}


def cold_search(config: Path, runs: int = 5, queries: list[str] | None = None) -> dict[str, Any]:
    return _timed(config, [None], queries or [QUERY], runs)[None]


def compare(
    config: Path, trees: list[Path], runs: int, queries: list[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Each tree's figures, the trees taking turns so that a change of load falls on all of them."""
    found = _timed(config, list(trees), queries or [QUERY], runs)
    return {str(tree): figures for tree, figures in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True, help="an index folder to search")
    parser.add_argument("--code", type=Path, action="append", default=[], help="a tree to time (repeat)")
    parser.add_argument("--query", action="append", default=[], help=f"a query (repeat; default {QUERY!r})")
    parser.add_argument("--runs", type=int, default=5, help="turns of every query for each tree")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="raggity-cold-") as tmp:
        config = Path(tmp) / "raggity.toml"
        config.write_text(f"[index]\npath = {json.dumps(str(args.index.resolve()))}\n")
        if args.code:
            results = compare(config, [tree.resolve() for tree in args.code], args.runs, args.query)
        else:
            results = {"this checkout": cold_search(config, args.runs, args.query)}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
