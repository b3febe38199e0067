"""Scale-out measurements (not part of `make bench`; needs the scale and dev extras):

1. per-chunk embedding throughput of an ingest on one node: the in-process engine (IndexSync) against
   the Ray engine's stages on a local Ray cluster, same files, same run;
2. search latency over the same chunk table on a local disk and on an S3-compatible server (moto on
   127.0.0.1: no network latency, so this measures request count and client overhead, not S3's RTT),
   cold (a freshly opened dataset) and warm (the same dataset again).

    PYTHONPATH=. python -m bench.scale [--copies N] [--workers W]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
QUERIES = [
    "How do I rebuild the index after changing the embedding model?",
    "citations line ranges for PDF pages",
    "MCP server tools for coding agents",
    "reciprocal rank fusion of BM25 and dense lists",
    "ignore files and hidden folders during ingest",
]
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def corpus(folder: Path, copies: int) -> list[Path]:
    """The project's docs, `copies` times over (distinct paths, so distinct chunk ids)."""
    paths = []
    for n in range(copies):
        for doc in sorted((ROOT / "docs").glob("*.md")):
            target = folder / f"copy{n}" / doc.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(doc, target)
            paths.append(target)
    return paths


def in_process(paths: list[Path], files: Any, max_tokens: int, index: Path) -> dict[str, Any]:
    from raggity.documents.chunker import ChunkingSettings  # noqa: PLC0415
    from raggity.inference.embedder import OnnxEmbedder  # noqa: PLC0415
    from raggity.inference.tokenizer import HFTokenizer  # noqa: PLC0415
    from raggity.pipeline.ingest.in_process import InProcessRows  # noqa: PLC0415
    from raggity.pipeline.ingest.sources import file_source, in_roots  # noqa: PLC0415
    from raggity.pipeline.ingest.sync import IndexSync  # noqa: PLC0415
    from raggity.store.layout import IndexLayout  # noqa: PLC0415
    from raggity.store.local_index import LocalIndex  # noqa: PLC0415

    started = time.perf_counter()
    embedder = OnnxEmbedder(files.onnx, files.tokenizer, identity=files.identity, max_tokens=max_tokens)
    chunking = ChunkingSettings()
    sync = IndexSync(
        LocalIndex(IndexLayout(index)),
        embedder=embedder,
        chunking=chunking,
        rows=InProcessRows(embedder, HFTokenizer(files.tokenizer), chunking),
    )
    report = sync.run([file_source(p) for p in paths], in_roots([paths[0].parent.parent]))
    wall = time.perf_counter() - started
    return {
        "chunks": report.chunks_written,
        "wall_seconds": round(wall, 2),
        "embed_seconds": round(report.embed_seconds, 2),
        "chunks_per_s": round(report.chunks_written / wall, 1),
    }


def on_ray(
    paths: list[Path], files: Any, max_tokens: int, dim: int, table: Path, workers: int
) -> dict[str, Any]:
    import ray  # noqa: PLC0415

    from raggity.config.schema import EmbeddingConfig  # noqa: PLC0415
    from raggity.pipeline.ingest.ray_engine import (  # noqa: PLC0415
        ChunkerSpec,
        EmbedderSpec,
        RayIngestPlan,
        new_tally,
        tally_report,
        write_chunks,
    )

    started = time.perf_counter()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        object_store_memory=256 * 1024 * 1024,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0"}},
    )
    up = time.perf_counter() - started
    threads = max(2 // workers, 1)
    plan = RayIngestPlan(
        paths=tuple((str(p), str(Path(p).resolve()), ()) for p in paths),
        chunker=ChunkerSpec(str(files.tokenizer)),
        embedder=EmbedderSpec(files, EmbeddingConfig(max_tokens=max_tokens, threads=threads)),
        dim=dim,
        chunk_workers=1,
        embed_workers=workers,
        chunk_cpus=0.25,
        embed_cpus=1.5 / workers,
        write_cpus=0.25,
    )
    started = time.perf_counter()
    tally = new_tally()
    write_chunks(plan, tally, str(table), {}, mode="create")
    wall = time.perf_counter() - started
    _, _, chunks, _ = tally_report(tally)
    ray.shutdown()
    return {
        "chunks": chunks,
        "ray_start_seconds": round(up, 2),
        "wall_seconds": round(wall, 2),
        "chunks_per_s": round(chunks / wall, 1),
        "embed_workers": workers,
        "onnx_threads_per_worker": threads,
    }


def latency(uri: str, options: dict[str, str], vectors: list[Any]) -> dict[str, float]:
    """Milliseconds: opening the table plus a first keyword and a first vector query (cold), and the
    median of repeated queries on the opened table (warm)."""
    import lance  # noqa: PLC0415

    from raggity.store.lance_fts import LanceFtsReader  # noqa: PLC0415

    cold = []
    for query, vector in zip(QUERIES, vectors, strict=True):
        started = time.perf_counter()
        dataset = lance.dataset(uri, storage_options=options)
        LanceFtsReader(dataset).search(query, 10)
        dataset.to_table(
            columns=["id"],
            nearest={"column": "vector", "q": vector, "k": 10},
            disable_scoring_autoprojection=True,
        )
        cold.append(time.perf_counter() - started)
    dataset = lance.dataset(uri, storage_options=options)
    reader = LanceFtsReader(dataset)
    keyword, dense = [], []
    for _ in range(5):
        for query, vector in zip(QUERIES, vectors, strict=True):
            started = time.perf_counter()
            reader.search(query, 10)
            keyword.append(time.perf_counter() - started)
            started = time.perf_counter()
            dataset.to_table(
                columns=["id"],
                nearest={"column": "vector", "q": vector, "k": 10},
                disable_scoring_autoprojection=True,
            )
            dense.append(time.perf_counter() - started)
    return {
        "cold_open_plus_both_ms": round(1000 * statistics.median(cold), 1),
        "warm_keyword_ms": round(1000 * statistics.median(keyword), 1),
        "warm_vector_ms": round(1000 * statistics.median(dense), 1),
    }


def search_latency(table: Path, files: Any, max_tokens: int) -> dict[str, Any]:
    import boto3  # noqa: PLC0415
    import lance  # noqa: PLC0415
    from moto.server import ThreadedMotoServer  # noqa: PLC0415

    from raggity.inference.embedder import OnnxEmbedder  # noqa: PLC0415
    from raggity.store.lance_fts import create_fts_index  # noqa: PLC0415

    create_fts_index(lance.dataset(str(table)))
    embedder = OnnxEmbedder(files.onnx, files.tokenizer, identity=files.identity, max_tokens=max_tokens)
    vectors = list(embedder.embed(QUERIES))
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        options = {"endpoint": f"http://{host}:{port}", "region": "us-east-1", "allow_http": "true"}
        boto3.client("s3", endpoint_url=options["endpoint"], region_name="us-east-1").create_bucket(
            Bucket="bench"
        )
        remote = "s3://bench/index/lancedb/chunks.lance"
        lance.write_dataset(lance.dataset(str(table)).to_table(), remote, storage_options=options)
        create_fts_index(lance.dataset(remote, storage_options=options))
        return {
            "local": latency(str(table), {}, vectors),
            "moto_s3": latency(remote, options, vectors),
        }
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    os.environ.update(FAKE_CREDENTIALS)
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"

    from raggity.config.schema import EmbeddingConfig  # noqa: PLC0415
    from raggity.models.registry import resolve_embedder  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="raggity-bench-scale-") as tmp:
        scratch = Path(tmp)
        paths = corpus(scratch / "docs", args.copies)
        config = EmbeddingConfig()
        files = resolve_embedder(config, scratch)
        local = in_process(paths, files, config.max_tokens, scratch / "index")
        import lance  # noqa: PLC0415

        dim = (
            lance.dataset(str(scratch / "index" / "lancedb" / "chunks.lance"))
            .schema.field("vector")
            .type.list_size
        )
        ray_table = scratch / "ray" / "chunks.lance"
        ray_result = on_ray(paths, files, config.max_tokens, dim, ray_table, args.workers)
        result = {
            "files": len(paths),
            "in_process": local,
            "ray": ray_result,
            "ray_over_in_process": round(ray_result["chunks_per_s"] / local["chunks_per_s"], 2),
            "search": search_latency(ray_table, files, config.max_tokens),
        }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
