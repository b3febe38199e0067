"""Query transforms on SQuAD 2.0 dev: gold-paragraph recall@5 and added latency per question.

    python -m bench.transforms [--n 200] [--model qwen2.5-coder-0.5b-instruct] [--threads 0]

Indexes the corpus into a throw-away index, runs the first N answerable questions through retrieval
with no transform and with each transform (HyDE, step-back, expansion, decomposition), prints a
table and writes bench/results/transforms.json. Transform outputs are not cached, so the latency is
what a first-time question pays. Retrieval is hybrid without the cross-encoder unless --rerank.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from raggity.api.evaluate import corpus_documents, ranked_documents
from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.core.trace import TraceRecorder
from raggity.evaluation.dataset import load_beir
from raggity.pipeline.search.query_plan import TransformOptions

ROOT = Path(__file__).resolve().parent.parent
SQUAD = Path(os.environ.get("RAGGITY_SQUAD_DATASET", ROOT.parent / "shared" / "eval" / "squad2-dev"))
RESULTS = ROOT / "bench" / "results"

SYSTEMS: dict[str, TransformOptions] = {
    "baseline": TransformOptions(),
    "hyde": TransformOptions(hyde=True),
    "step-back": TransformOptions(step_back=True),
    "expand": TransformOptions(expand=True),
    "decompose": TransformOptions(decompose=True),
}


def _session(workdir: Path, model: str, threads: int, rerank: bool) -> Raggity:
    config = workdir / "raggity.toml"
    config.write_text(
        f'[index]\npath = "index"\n[retrieval]\nrerank = {str(rerank).lower()}\n'
        f'[generation]\nmodel = "{model}"\nthreads = {threads}\ncache = false\n',
        encoding="utf-8",
    )
    return Raggity(load_config(config))


def run(n: int, model: str, threads: int, rerank: bool, k: int, systems: list[str]) -> dict[str, Any]:
    dataset = load_beir(SQUAD)
    questions = [q for q in dataset.questions if not q.impossible][:n]
    workdir = Path(tempfile.mkdtemp(prefix="raggity-transforms-"))
    try:
        session = _session(workdir, model, threads, rerank)
        started = time.perf_counter()
        session.index_documents(corpus_documents(dataset))
        index_seconds = time.perf_counter() - started
        session.models.generator  # noqa: B018 - load once, outside the timings
        rows: dict[str, dict[str, Any]] = {}
        for name in systems:
            rows[name] = _system(session, questions, SYSTEMS[name], rerank, k)
            print(f"{name}: done", file=sys.stderr)
        base_ms = rows["baseline"]["mean_ms"] if "baseline" in rows else 0.0
        for row in rows.values():
            row["added_ms"] = round(row["mean_ms"] - base_ms, 1)
        return {
            "dataset": str(SQUAD.name),
            "questions": len(questions),
            "documents": len(dataset.corpus),
            "model": session.models.generator_identity,
            "threads": threads or os.cpu_count(),
            "rerank": rerank,
            "k": k,
            "index_seconds": round(index_seconds, 1),
            "systems": rows,
        }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _system(
    session: Raggity, questions: list[Any], options: TransformOptions, rerank: bool, k: int
) -> dict[str, Any]:
    hits = 0
    totals: list[float] = []
    llm_ms: list[float] = []
    tokens: list[int] = []
    for q in questions:
        trace = TraceRecorder()
        started = time.perf_counter()
        found = session.searcher.retrieve(
            q.question, trace, rerank=rerank, transforms=options, use_cache=False
        )
        totals.append((time.perf_counter() - started) * 1000)
        calls = [t for t in trace.stages if t.stage.startswith("transform:")]
        llm_ms.append(sum(t.ms for t in calls))
        tokens.append(sum(int(str(t.detail.get("tokens", 0))) for t in calls))
        hits += any(g in ranked_documents(found, k) for g in q.gold)
    return {
        f"recall@{k}": round(hits / max(len(questions), 1), 4),
        "mean_ms": round(statistics.fmean(totals), 1),
        "mean_llm_ms": round(statistics.fmean(llm_ms), 1),
        "mean_tokens": round(statistics.fmean(tokens), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=200, help="answerable questions (default 200)")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--threads", type=int, default=0, help="llama.cpp threads (0: one per core)")
    parser.add_argument("--rerank", action="store_true", help="rerank with the cross-encoder")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated subset")
    parser.add_argument("--out", type=Path, default=RESULTS / "transforms.json")
    args = parser.parse_args()
    result = run(args.n, args.model, args.threads, args.rerank, args.k, args.systems.split(","))
    k = args.k
    print(f"{result['questions']} questions, {result['model']}, {result['threads']} thread(s)")
    print(
        f"{'system':<11} {'recall@' + str(k):>9} {'ms/question':>12} {'added ms':>9} {'LLM ms':>8} {'tokens':>7}"
    )
    for name, row in result["systems"].items():
        print(
            f"{name:<11} {row[f'recall@{k}']:>9.3f} {row['mean_ms']:>12.1f} {row['added_ms']:>9.1f} "
            f"{row['mean_llm_ms']:>8.1f} {row['mean_tokens']:>7.1f}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
