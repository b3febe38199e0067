"""`rag search` on a large kept index, trees and index states compared in one run (issue #45): cold wall
time and peak RSS of whole `rag search` processes, and the warm whole-path search in one process.

    PYTHONPATH=. python -m bench.scale_search --case before=TREE:INDEX --case after=TREE:INDEX
        [--runs 5] [--warm 20] [--out bench/results/scale_search.json]
    PYTHONPATH=. python -m bench.scale_search --name-version INDEX

A case is a tree (a checkout, or `git archive` of a commit; "." for this one) and an index folder
(e.g. the one `bench/scale_index.py --keep` leaves, or a hard-linked copy of it with another manifest
document). The cases take turns query by query, so that a change of the machine's load falls on all
of them. Each case first runs every query once untimed (Python's byte-code, the optimised ONNX model,
the page cache), as bench/cold_search.py does. Peak RSS is /usr/bin/time's of the `rag` process
itself (a child forked from a large process inherits its high-water mark: see bench/scale_index.py).
`same_output` says whether each run printed what the first case's first run printed for that query.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.scale_index import QUERIES

ROOT = Path(__file__).resolve().parent.parent
_RAG = "from raggity.cli.main import run; run()"
# The whole search path in one process, after a first search: what a `rag mcp` or `rag chat` pays.
_WARM = """
import json, statistics, sys, time
from pathlib import Path
from raggity.api.session import Raggity
from raggity.config import load_config
session = Raggity(load_config(Path(sys.argv[1])))
queries, rounds = json.loads(sys.argv[2]), int(sys.argv[3])
session.search(queries[0])
took = []
for n in range(rounds):
    began = time.perf_counter()
    session.search(queries[n % len(queries)])
    took.append(1000 * (time.perf_counter() - began))
print(json.dumps({"search_ms_median": round(statistics.median(took), 1), "search_ms_max": round(max(took), 1)}))
"""


def _env(tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    return dict(env, PYTHONPATH=str(tree))


def _config(folder: Path, index: Path) -> Path:
    path = folder / f"{abs(hash(str(index)))}.toml"
    path.write_text(f"[index]\npath = {json.dumps(str(index))}\n", encoding="utf-8")
    return path


def cold(tree: Path, config: Path, query: str, folder: Path) -> tuple[float, float, bytes]:
    """(wall seconds, peak RSS in MB, what it printed) of one `rag search` process."""
    peak = folder / "peak.txt"
    timer = ["/usr/bin/time", "-f", "%M", "-o", str(peak)]
    began = time.perf_counter()
    done = subprocess.run(
        [*timer, sys.executable, "-c", _RAG, "--config", str(config), "search", query, "--json"],
        check=True,
        capture_output=True,
        env=_env(tree),
        cwd=folder,
    )
    wall = time.perf_counter() - began
    return wall, int(peak.read_text().split()[-1]) / 1024, done.stdout


def warm(tree: Path, config: Path, rounds: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _WARM, str(config), json.dumps(QUERIES), str(rounds)],
        check=True,
        capture_output=True,
        text=True,
        env=_env(tree),
        cwd=tempfile.gettempdir(),
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def name_version(index: Path) -> dict[str, Any]:
    """Commits the index once through the writer, as an ingest that changed nothing does, so that an
    index written before its manifest named a chunk version gets one; returns the header after."""
    from raggity.store.layout import IndexLayout  # noqa: PLC0415
    from raggity.store.local_index import LocalIndex  # noqa: PLC0415
    from raggity.store.manifest import load_header  # noqa: PLC0415

    layout = IndexLayout(index)
    store = LocalIndex(layout, version_grace=None)
    began = time.perf_counter()
    with store.lock(0.0), store.writer(384, "en_stem") as writer:
        writer.commit(writer.open(rebuild=False), changed=False)
    header = load_header(layout.manifest)
    return {
        "seconds": round(time.perf_counter() - began, 1),
        "chunk_version": header.chunk_version,
        "chunks": header.chunks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument(
        "--name-version", type=Path, help="commit this index once (see name_version), then stop"
    )
    parser.add_argument("--case", action="append", default=[], help="NAME=TREE:INDEX (repeat)")
    parser.add_argument("--runs", type=int, default=5, help="timed turns of every query per case")
    parser.add_argument("--queries", type=int, default=3, help="how many of bench.scale_index's queries")
    parser.add_argument("--warm", type=int, default=20, help="timed searches in the warm process")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.name_version is not None:
        print(json.dumps(name_version(args.name_version)))
        return
    cases: dict[str, tuple[Path, Path]] = {}
    for spec in args.case:
        name, _, rest = spec.partition("=")
        tree, _, index = rest.partition(":")
        cases[name] = (Path(tree).resolve(), Path(index).resolve())
    queries = QUERIES[: args.queries]
    report: dict[str, Any] = {
        "command": " ".join(["python -m bench.scale_search", *sys.argv[1:]]),
        "load_average_at_start": os.getloadavg(),
        "cases": {name: {"tree": str(t), "index": str(i)} for name, (t, i) in cases.items()},
    }
    with tempfile.TemporaryDirectory(prefix="raggity-scale-search-") as tmp:
        folder = Path(tmp)
        configs = {name: _config(folder, index) for name, (_, index) in cases.items()}
        first = next(iter(cases))
        expected = {q: cold(cases[first][0], configs[first], q, folder)[2] for q in queries}
        for name in list(cases)[1:]:
            for q in queries:
                cold(cases[name][0], configs[name], q, folder)
        walls: dict[str, list[float]] = {name: [] for name in cases}
        peaks: dict[str, list[float]] = {name: [] for name in cases}
        same = dict.fromkeys(cases, True)
        for _ in range(args.runs):
            for q in queries:
                for name, (tree, _) in cases.items():
                    wall, peak, printed = cold(tree, configs[name], q, folder)
                    walls[name].append(wall)
                    peaks[name].append(peak)
                    same[name] = same[name] and printed == expected[q]
                    print(name, q, round(wall, 2), round(peak), file=sys.stderr, flush=True)
        for name, (tree, _) in cases.items():
            report["cases"][name].update(
                {
                    "cold_wall_s_median": round(statistics.median(walls[name]), 2),
                    "cold_wall_s_min": round(min(walls[name]), 2),
                    "cold_wall_s_max": round(max(walls[name]), 2),
                    "peak_rss_mb_median": round(statistics.median(peaks[name])),
                    "peak_rss_mb_max": round(max(peaks[name])),
                    "runs": len(walls[name]),
                    "same_output": same[name],
                    "warm": warm(tree, configs[name], args.warm),
                }
            )
    report["load_average_at_end"] = os.getloadavg()
    text = json.dumps(report, indent=1) + "\n"
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
