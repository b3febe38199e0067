"""Index scale, measured (issue #45 item 1): indexes of N synthetic chunks written through raggity's own
store code (the writer `rag ingest` uses), then searched by `rag search` and by the chunk table's reader.

Rows: passages of SciFact's corpus (real text shapes, a heading of their own each); vectors: the real
embedder's for a sample of passages, and for every row a mix of two sample vectors plus noise,
normalised, so no one waits hours for a million embeddings and the vectors still lie where real ones
do. Queries: real embeddings of held-out passages (not among the rows' bases).

For each size it reports: the append and commit times of the ingest, the vector-index build (what
commit() runs above `[index] vector_index_min_rows`), an incremental ingest of 1% more rows (index kept
current), the manifest's size, the index's size on disk, `rag search` cold (a child process: wall time
and its own peak RSS) and warm (in one process: the whole hybrid search, and the dense step alone),
exact against indexed, and recall@10 of the indexed search against exact search for a grid of
nprobes x refine_factor.

    PYTHONPATH=. nice -n 5 .venv/bin/python -m bench.scale_index --rows 100000 [--rows 1000000]
        [--work /tmp/scale_index] [--out bench/results/scale_index.json]

Not part of `make bench` (a million rows take long; run it on a quiet machine, or say it was not).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bench.child import run_child

ROOT = Path(__file__).resolve().parent.parent
SCIFACT = Path(os.environ.get("RAGGITY_EVAL", "/work/shared/eval")) / "scifact" / "corpus.jsonl"
BATCH = 4096  # rows per append: one Lance fragment and one Tantivy commit, as an ingest batches
PER_SOURCE = 16  # chunks per synthetic file in the manifest
QUERIES = [  # for `rag search`: the whole path, text in, ranked chunks out
    "diffusion tensor imaging of white matter in newborns",
    "vitamin D supplementation and fracture risk",
    "statin therapy in elderly patients",
    "gene expression in tumour microenvironment",
    "antibiotic resistance mechanisms in bacteria",
]
GRID = [(nprobes, refine) for nprobes in (10, 20, 30) for refine in (1, 2, 4)]


def passages(count: int) -> list[str]:
    """SciFact abstracts cut into passages of about a chunk's length (256 tokens ~ 1,000 characters)."""
    found: list[str] = []
    with SCIFACT.open(encoding="utf-8") as lines:
        for line in lines:
            text = json.loads(line)["text"]
            found.extend(text[start : start + 1000] for start in range(0, len(text), 1000) if text[start:])
            if len(found) >= count:
                break
    return found[:count]


def synthetic_vectors(base: np.ndarray, rows: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Blocks of unit vectors, each base[i] + w * base[j] + noise (w uniform in [0, 0.6], noise of
    norm ~0.35): a continuum between real embeddings rather than tight copies of them."""
    dim = base.shape[1]
    for start in range(0, rows, BATCH):
        n = min(BATCH, rows - start)
        first, second = rng.integers(0, len(base), n), rng.integers(0, len(base), n)
        mix = rng.uniform(0.0, 0.6, (n, 1)).astype(np.float32)
        noise = rng.normal(0.0, 0.35 / np.sqrt(dim), (n, dim)).astype(np.float32)
        block = base[first] + mix * base[second] + noise
        yield block / np.linalg.norm(block, axis=1, keepdims=True)


def chunk_id(n: int) -> str:
    return hashlib.blake2b(str(n).encode(), digest_size=16).hexdigest()


def config_file(folder: Path, min_rows: int) -> Path:
    path = folder / "raggity.toml"
    path.write_text(f'[index]\npath = "index"\nvector_index_min_rows = {min_rows}\n', encoding="utf-8")
    return path


def write_rows(
    config: Any, models: Any, texts: list[str], vectors: Iterator[np.ndarray], rows: int, first: int
) -> dict[str, Any]:
    """Appends rows first..first+rows through the store ingest uses, then commits; returns timings."""
    from raggity.core.types import Chunk, Location  # noqa: PLC0415
    from raggity.pipeline.ingest.indexer import chunking_settings, index_store  # noqa: PLC0415
    from raggity.pipeline.ingest.plan import index_fingerprint  # noqa: PLC0415
    from raggity.store.manifest import SourceEntry  # noqa: PLC0415

    store = index_store(config)
    appended = 0.0
    with store.lock(0.0), store.writer(models.embedder.dim, config.retrieval.bm25_tokenizer) as writer:
        manifest = writer.open(rebuild=False)
        manifest.fingerprint = index_fingerprint(models.embedder_identity, chunking_settings(config))
        n = first
        for block in vectors:
            chunks = [
                Chunk(
                    chunk_id(n + i),
                    f"/corpus/part{(n + i) // 10_000}/doc{(n + i) // PER_SOURCE}.md",
                    texts[(n + i) % len(texts)],
                    f"Section {(n + i) % 97} > Passage {n + i}",
                    Location((n + i) % PER_SOURCE * 20 + 1, (n + i) % PER_SOURCE * 20 + 19),
                    chunk_id(-(n + i)),
                    (n + i) % PER_SOURCE,
                    240,
                )
                for i in range(len(block))
            ]
            began = time.perf_counter()
            writer.append(chunks, block)
            appended += time.perf_counter() - began
            for chunk in chunks:
                entry = manifest.sources.get(chunk.source)
                ids = (entry.chunk_ids if entry else ()) + (chunk.id,)
                manifest.sources[chunk.source] = SourceEntry("0" * 64, 1000, 0, ids)
            n += len(block)
        began = time.perf_counter()
        writer.commit(manifest, changed=True)
        committed = time.perf_counter() - began
    return {"rows": rows, "append_s": round(appended, 1), "commit_s": round(committed, 1)}


def folder_mb(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20, 1)


def manifest_mb(layout: Any) -> float:
    """The manifest's document and its sources table, every version still kept (`layout`: an
    IndexLayout, imported where raggity is)."""
    files: list[Path] = [layout.manifest, *(p for p in layout.sources.rglob("*") if p.is_file())]
    return round(sum(p.stat().st_size for p in files) / 2**20, 1)


def cold_search(folder: Path, cfg: Path) -> dict[str, Any]:
    """`rag search` in a fresh process per query: wall time and the process's own peak RSS.

    The RSS comes from /usr/bin/time, not from wait4 here: a child forked from this process (which
    holds the whole vector matrix) inherits this process's high-water mark through fork and exec,
    so ru_maxrss would report this benchmark's memory, not the search's."""
    runs, peaks = [], []
    for n, query in enumerate(QUERIES[:3]):
        peak = folder / f"rss{n}.txt"
        argv = [str(ROOT / ".venv/bin/rag"), "search", query, "--config", str(cfg), "--json"]
        runs.append(run_child(["/usr/bin/time", "-f", "%M", "-o", str(peak), *argv], cwd=folder))
        peaks.append(int(peak.read_text().split()[-1]) / 1024)
    return {
        "wall_s_median": round(statistics.median(r.wall_seconds for r in runs), 2),
        "peak_rss_mb_max": round(max(peaks), 0),
    }


def warm_search(cfg: Path) -> dict[str, Any]:
    """The whole `rag search` path in one process (query embedding, dense, BM25, fusion, rerank),
    after a first query; and the dense step alone on the same snapshot."""
    from raggity.api.session import Raggity  # noqa: PLC0415
    from raggity.config import load_config  # noqa: PLC0415
    from raggity.store.layout import IndexLayout  # noqa: PLC0415
    from raggity.store.vector_table import VectorTableReader  # noqa: PLC0415

    config = load_config(cfg)
    session = Raggity(config)
    session.search(QUERIES[0])
    took = []
    for query in QUERIES * 4:
        began = time.perf_counter()
        session.search(query)
        took.append(1000 * (time.perf_counter() - began))
    reader = VectorTableReader(IndexLayout(config.index_dir).table)
    vectors = session.models.embed(QUERIES)
    reader.nearest(vectors[0], 10)
    dense = []
    for vector in list(vectors) * 4:
        began = time.perf_counter()
        reader.nearest(vector, 10)
        dense.append(1000 * (time.perf_counter() - began))
    return {
        "search_ms_median": round(statistics.median(took), 1),
        "search_ms_max": round(max(took), 1),
        "dense_ms_median": round(statistics.median(dense), 2),
        "indexed": reader.indexed,
    }


def recall(
    table: Path, matrix: np.ndarray, ids: list[str], queries: np.ndarray, grid: list[tuple[int, int]] = GRID
) -> list[dict[str, Any]]:
    """recall@10 of the indexed search against exact search over the same rows, per grid point."""
    from raggity.store.vector_index import AnnSearch  # noqa: PLC0415
    from raggity.store.vector_table import VectorTableReader  # noqa: PLC0415

    exact = [{ids[i] for i in np.argpartition(-(matrix @ q), 10)[:10]} for q in queries]
    rows = []
    for nprobes, refine in grid:
        reader = VectorTableReader(table, ann=AnnSearch(nprobes, refine))
        reader.nearest(queries[0], 10)
        hits, took = [], []
        for q, truth in zip(queries, exact, strict=True):
            began = time.perf_counter()
            found = reader.nearest(q, 10)
            took.append(1000 * (time.perf_counter() - began))
            hits.append(len({cid for cid, _ in found} & truth) / 10)
        rows.append(
            {
                "nprobes": nprobes,
                "refine_factor": refine,
                "recall_at_10": round(float(np.mean(hits)), 4),
                "ms_median": round(statistics.median(took), 2),
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def measure(
    rows: int, work: Path, base: np.ndarray, queries: np.ndarray, texts: list[str], seed: int
) -> dict[str, Any]:
    from raggity.api.session import Raggity  # noqa: PLC0415
    from raggity.config import load_config  # noqa: PLC0415
    from raggity.store.layout import IndexLayout  # noqa: PLC0415
    from raggity.store.vector_index import vector_index_type  # noqa: PLC0415

    folder = work / f"rows{rows}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    threshold = min(rows, 100_000)
    # First an ingest below its threshold (exact search), as today; then the index the commit of
    # an ingest above it builds, timed alone; then an ingest of 1% more rows through the product path.
    cfg = config_file(folder, rows + 1)
    config = load_config(cfg)
    session = Raggity(config)
    matrix = np.empty((rows, base.shape[1]), dtype=np.float32)
    rng = np.random.default_rng(seed)

    def kept(blocks: Iterator[np.ndarray], at: int) -> Iterator[np.ndarray]:
        for block in blocks:
            matrix[at : at + len(block)] = block
            at += len(block)
            yield block

    result: dict[str, Any] = {"rows": rows, "threshold": threshold}
    result["ingest"] = write_rows(
        config, session.models, texts, kept(synthetic_vectors(base, rows, rng), 0), rows, 0
    )
    layout = IndexLayout(config.index_dir)
    result["manifest_mb"] = manifest_mb(layout)
    result["exact"] = {
        "disk_mb": folder_mb(layout.root),
        "cold": cold_search(folder, cfg),
        "warm": warm_search(cfg),
    }
    print(json.dumps(result), file=sys.stderr, flush=True)

    import lance  # noqa: PLC0415

    # The index is built by the commit of an ingest with the threshold crossed (no rows added): the
    # manifest then names the table's version with the index, as readers open it. Built beside the
    # writer, the manifest named the version before it, and `rag search` searched without the index.
    cfg = config_file(folder, threshold)
    built = write_rows(load_config(cfg), session.models, texts, iter(()), 0, rows)
    result["index_build_s"] = built["commit_s"]
    result["index_action"] = "built" if vector_index_type(lance.dataset(str(layout.table))) else "exact"
    result["indexed"] = {
        "disk_mb": folder_mb(layout.root),
        "cold": cold_search(folder, cfg),
        "warm": warm_search(cfg),
    }
    ids = [chunk_id(n) for n in range(rows)]
    result["recall"] = recall(layout.table, matrix, ids, queries)
    print(json.dumps(result), file=sys.stderr, flush=True)

    more = max(rows // 100, 1)
    extra = np.empty((more, base.shape[1]), dtype=np.float32)

    def kept_extra(blocks: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
        at = 0
        for block in blocks:
            extra[at : at + len(block)] = block
            at += len(block)
            yield block

    config = load_config(cfg)
    result["incremental"] = write_rows(
        config, session.models, texts, kept_extra(synthetic_vectors(base, more, rng)), more, rows
    )
    dataset = lance.dataset(str(layout.table))
    stats = dataset.stats.index_stats("vector_idx")
    result["incremental"]["unindexed_rows_after"] = int(stats["num_unindexed_rows"])
    result["incremental"]["manifest_mb"] = manifest_mb(layout)
    all_ids = ids + [chunk_id(n) for n in range(rows, rows + more)]
    result["incremental"]["recall"] = recall(
        layout.table, np.vstack([matrix, extra]), all_ids, queries, [(20, 2), (30, 2)]
    )
    result["indexed"]["disk_mb_after_incremental"] = folder_mb(layout.root)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rows", type=int, action="append", help="index size (repeatable)")
    parser.add_argument("--sample", type=int, default=512, help="passages embedded for real as bases")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--work", type=Path, default=Path("/tmp/raggity-scale-index"))
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/scale_index.json")
    parser.add_argument("--keep", action="store_true", help="keep the indexes under --work")
    args = parser.parse_args()

    from raggity.api.session import Raggity  # noqa: PLC0415
    from raggity.config.schema import Config, IndexConfig  # noqa: PLC0415

    args.work.mkdir(parents=True, exist_ok=True)
    texts = passages(args.sample + args.queries)
    began = time.perf_counter()
    embedded = np.asarray(
        Raggity(Config(index=IndexConfig(str(args.work / "unused")))).models.embed(texts), dtype=np.float32
    )
    embed_s = time.perf_counter() - began
    base, queries = embedded[: args.sample], embedded[args.sample :]
    report: dict[str, Any] = {
        "machine": {"cores": os.cpu_count(), "load_average_at_start": os.getloadavg()},
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], check=False, cwd=ROOT, capture_output=True, text=True
        ).stdout.strip(),
        "sample": {"passages": args.sample, "queries": args.queries, "embed_s": round(embed_s, 1)},
        "sizes": [],
    }
    for n, rows in enumerate(args.rows or [100_000]):
        report["sizes"].append(measure(rows, args.work, base, queries, texts[: args.sample], seed=n))
        report["machine"]["load_average_at_end"] = os.getloadavg()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        if not args.keep:
            shutil.rmtree(args.work / f"rows{rows}", ignore_errors=True)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
