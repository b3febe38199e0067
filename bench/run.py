"""`make bench`: ingest throughput and memory, the embedding stage against bare onnxruntime, search
latency (cold and warm), rerank latency, ask time to first token, and one `rag ask` process's peak RSS.

Prints one table and writes bench/results/bench.json. Uses ../shared/eval/scifact, and a real
documentation folder when one is installed (bench/ingest_docs.py; RAGGITY_BENCH_DOCS picks another).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.child import run_child
from bench.cold_search import cold_search
from bench.ingest_docs import docs_folder, ingest_folder

ROOT = Path(__file__).resolve().parent.parent
SCIFACT = Path(os.environ.get("RAGGITY_BENCH_DATASET", ROOT.parent / "shared" / "eval" / "scifact"))
RESULTS = ROOT / "bench" / "results"
RAG = Path(sys.executable).parent / "rag"


def ingest(index: Path, code: Path = ROOT) -> dict[str, Any]:
    """SciFact ingested into `index` by the checkout at `code` (bench.ingest_scifact in a child)."""
    env = dict(os.environ, PYTHONPATH=str(code))
    run = run_child(
        [sys.executable, "-m", "bench.ingest_scifact", str(SCIFACT), str(index)], cwd=code, env=env
    )
    result: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    result["peak_rss_mb"] = run.peak_rss_mb
    result["chunks_per_s"] = result["chunks"] / result["wall_seconds"]
    result["tokens_per_s"] = result["tokens"] / result["wall_seconds"]
    result["outside_embedding_share"] = 1 - result["embed_seconds"] / result["wall_seconds"]
    return result


def docs_ingest(folder: Path) -> dict[str, Any]:
    """The optional real-documentation measurement, skipped with a printed line when no folder is installed."""
    docs = docs_folder()
    if docs is None:
        print("docs ingest skipped: set RAGGITY_BENCH_DOCS to a folder (or install postgresql-doc-15)")
        return {"skipped": "no documentation folder"}
    print(f"docs ingest: {docs} (a few minutes)")
    return ingest_folder(docs, folder / "docs")


def write_config(folder: Path, index: Path, **generation: Any) -> Path:
    import tomli_w  # noqa: PLC0415 - each measurement imports what it measures

    config = folder / "raggity.toml"
    config.write_text(tomli_w.dumps({"index": {"path": str(index)}, "generation": generation}))
    return config


def warm_search(config: Path) -> dict[str, float]:
    from raggity.api.session import Raggity  # noqa: PLC0415 - each measurement imports what it measures
    from raggity.config.loader import load_config  # noqa: PLC0415 - each measurement imports what it measures
    from raggity.evaluation.dataset import load_beir  # noqa: PLC0415 - each measurement imports what it measures
    from raggity.evaluation.metrics import percentile  # noqa: PLC0415 - each measurement imports what it measures

    session = Raggity(load_config(config))
    queries = [q.text for q in load_beir(SCIFACT).queries][:100]
    session.search(queries[0])
    latencies = []
    for q in queries:
        began = time.perf_counter()
        session.search(q)
        latencies.append((time.perf_counter() - began) * 1000)
    return {"p50_ms": percentile(latencies, 50), "p95_ms": percentile(latencies, 95), "queries": len(queries)}


def rerank_latency(folder: Path) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from raggity.inference.cross_encoder import OnnxCrossEncoder  # noqa: PLC0415 - each measurement imports what it measures
    from tests.inference.cross_encoder_model import build_test_cross_encoder  # noqa: PLC0415 - each measurement imports what it measures

    model = build_test_cross_encoder(folder / "ce")
    scorer = OnnxCrossEncoder(model)
    passage = " ".join(["retrieval augmented generation evaluates passages against the query"] * 30)
    passages = [passage] * 30
    scorer.score("query about retrieval", passages)
    times = []
    for _ in range(5):
        began = time.perf_counter()
        scorer.score("query about retrieval", passages)
        times.append((time.perf_counter() - began) * 1000)
    return {
        "model": "test overlap cross-encoder (no real one installed)",
        "median_ms_30x256": statistics.median(times),
    }


def ask_timing(config: Path) -> dict[str, float]:
    from raggity.api.session import Raggity  # noqa: PLC0415 - each measurement imports what it measures
    from raggity.config.loader import load_config  # noqa: PLC0415 - each measurement imports what it measures

    session = Raggity(load_config(config))
    question = "Does vitamin D supplementation reduce the risk of bone fractures in older adults?"
    began = time.perf_counter()
    session.models.generator  # noqa: B018 - load the model outside the timed answer, like a warm process
    load_s = time.perf_counter() - began
    first: list[float] = []
    began = time.perf_counter()
    answer = session.ask(
        question, on_token=lambda _: first.append(time.perf_counter()) if not first else None
    )
    total = time.perf_counter() - began
    stages = {t.stage: t for t in answer.trace}
    before_generate = sum(
        t.ms for name, t in stages.items() if name not in ("generate", "citations", "load-model")
    )
    prefill = (
        float(str(stages["generate"].detail.get("first_token_ms", "nan")))
        if "generate" in stages
        else float("nan")
    )
    return {
        "model_load_s": load_s,
        "time_to_first_token_s": (first[0] - began) if first else float("nan"),
        "total_s": total,
        "retrieval_and_prompt_ms": before_generate,
        "model_prefill_ms": prefill,
        "retrieval_share_of_prefill": before_generate / prefill if not math.isnan(prefill) else float("nan"),
        "abstained": float(answer.abstained),
    }


def ask_process(config: Path) -> dict[str, float]:
    """One `rag ask` as a user runs it, in a child process: its peak RSS (the whole question: the index,
    the embedder, the generator and its context) and the wait to the first answer text as the trace
    counts it, from the question to the first character shown."""
    question = "Does vitamin D supplementation reduce the risk of bone fractures in older adults?"
    run = run_child([str(RAG), "ask", "--json", "--no-cache", "--config", str(config), question], cwd=ROOT)
    stages = {t["stage"]: t for t in json.loads(run.stdout)["trace"]}
    first_text = stages.get("generate", {}).get("detail", {}).get("first_text_ms", float("nan"))
    return {"peak_rss_mb": run.peak_rss_mb, "wall_s": run.wall_seconds, "first_text_s": first_text / 1000}


def main() -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="raggity-bench-") as tmp:
        folder = Path(tmp)
        index = folder / "index"
        results: dict[str, Any] = {"ingest": ingest(index)}
        from bench.embed_vs_bare import compare, indexed_texts  # noqa: PLC0415 - each measurement imports what it measures

        results["embed_vs_bare"] = compare(indexed_texts(index), ROOT)
        results["ingest_docs"] = docs_ingest(folder)
        config = write_config(folder, index)
        results["search_cold"] = cold_search(config)
        results["search_warm"] = warm_search(config)
        results["rerank"] = rerank_latency(folder)
        results["ask"] = ask_timing(config)
        results["ask_process"] = ask_process(config)
    (RESULTS / "bench.json").write_text(json.dumps(results, indent=2))
    _print(results)


def _print(results: dict[str, Any]) -> None:
    from rich.console import Console  # noqa: PLC0415 - each measurement imports what it measures
    from rich.table import Table  # noqa: PLC0415 - each measurement imports what it measures

    table = Table(title="raggity bench (2-core machine)", header_style="bold")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for section, values in results.items():
        for name, value in values.items():
            table.add_row(f"{section}.{name}", f"{value:.3f}" if isinstance(value, float) else str(value))
    Console().print(table)
    print(f"written to {RESULTS / 'bench.json'}")


if __name__ == "__main__":
    main()
