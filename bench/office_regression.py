"""Did the readers of issue #44 slow what was there before? `make bench`'s two ingest figures (text:
SciFact through bench.ingest_scifact; HTML: a documentation folder through bench.ingest_docs) and the
time of `rag --help`, for an older checkout and this one, in one run, alternating which goes first
so that a busy machine weighs on both alike. Prints each figure and the ratio this/old.

    git worktree add /tmp/wt-old <commit before the readers>
    nice -n 5 .venv/bin/python -m bench.office_regression /tmp/wt-old [scifact docs] [html folder]

A SciFact slice (the first DOCS documents) keeps a round to minutes on a shared 2-core machine.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.ingest_docs import CLI, ingest_folder

ROOT = Path(__file__).resolve().parent.parent
SCIFACT = ROOT.parent / "shared" / "eval" / "scifact"
HTML = Path("/usr/share/doc/python-django-doc/html/topics/http")
DOCS = 150
ROUNDS = 2
HELP_RUNS = 5


def scifact_slice(folder: Path, documents: int) -> Path:
    """The first `documents` of SciFact's corpus, with its queries and judgements (load_beir wants them)."""
    folder.mkdir(parents=True)
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as corpus:
        lines = [line for _, line in zip(range(documents), corpus, strict=False)]
    (folder / "corpus.jsonl").write_text("".join(lines), encoding="utf-8")
    ids = {json.loads(line)["_id"] for line in lines}
    header, *rows = (SCIFACT / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    kept = [row for row in rows if row.split("\t")[1] in ids]
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("\n".join([header, *kept]) + "\n", encoding="utf-8")
    asked = {row.split("\t")[0] for row in kept}
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as queries:
        chosen = [line for line in queries if json.loads(line)["_id"] in asked]
    (folder / "queries.jsonl").write_text("".join(chosen), encoding="utf-8")
    return folder


def text_ingest(code: Path, dataset: Path, index: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(code))
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "bench.ingest_scifact", str(dataset), str(index)],
        cwd=code,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result["process_seconds"] = time.perf_counter() - started
    result["chunks_per_s"] = result["chunks"] / result["wall_seconds"]
    return result


def help_seconds(code: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(code))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", CLI, "--help"], cwd=code, env=env, capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    old = Path(sys.argv[1]).resolve()
    documents = int(sys.argv[2]) if len(sys.argv) > 2 else DOCS
    html = Path(sys.argv[3]) if len(sys.argv) > 3 else HTML
    codes = {"old": old, "new": ROOT}
    figures: dict[str, dict[str, list[float]]] = {name: {} for name in codes}
    with tempfile.TemporaryDirectory() as scratch:
        dataset = scifact_slice(Path(scratch) / "scifact", documents)
        for round_number in range(ROUNDS):
            order = list(codes) if round_number % 2 == 0 else list(reversed(codes))
            for name in order:
                work = Path(scratch) / f"{name}-{round_number}"
                text = text_ingest(codes[name], dataset, work / "text")
                docs = ingest_folder(html, work / "html", code=codes[name])
                got = figures[name]
                got.setdefault("text chunks/s", []).append(text["chunks_per_s"])
                got.setdefault("html chunks/s", []).append(docs["chunks_per_s"])
                got.setdefault("html chunks", []).append(docs["chunks"])
                got.setdefault("html peak MB", []).append(docs["peak_rss_mb"])
                print(
                    f"round {round_number + 1} {name}: text {text['chunks']} chunks "
                    f"{text['chunks_per_s']:.1f}/s, html {docs['chunks']} chunks {docs['chunks_per_s']:.1f}/s",
                    flush=True,
                )
        for _ in range(HELP_RUNS):
            for name, code in codes.items():
                figures[name].setdefault("rag --help s", []).append(help_seconds(code))
    for key in figures["new"]:
        old_value = statistics.median(figures["old"][key])
        new_value = statistics.median(figures["new"][key])
        print(f"{key:16} old {old_value:9.3f}  new {new_value:9.3f}  new/old {new_value / old_value:.3f}")


if __name__ == "__main__":
    main()
