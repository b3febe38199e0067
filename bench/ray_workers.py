"""In-process against Ray at 1, 2 and 4 local embedding workers, on the same corpus, in one run
(issue #45 item 7). Not part of `make bench`: it needs the scale and dev extras (ray, lance-ray, moto).

Every engine writes to an index on an S3-compatible server (moto on 127.0.0.1, the store the Ray
engine writes to), each run in a child process of its own (a fresh Ray with workers + 1 CPUs), and
each reports, through `rag ingest`'s own Python API:

- a first ingest of the corpus: seconds, chunks and chunks per second;
- an incremental ingest after a paragraph is put at the top of `--edit` files: seconds and the chunks
  embedded (a changed file's unchanged chunks keep their vectors under both engines);
- the full-text index over the committed table: Lance's own build in this process (what the store
  does at commit) against lance-ray's distributed `create_scalar_index` with as many workers.

    PYTHONPATH=. python -m bench.ray_workers [--corpus /usr/share/doc/git-doc] [--files 300]

Prints one JSON object per engine, then a table. On a shared 2-core machine more Ray workers than
cores measure contention, not scale-out: say so next to the numbers.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}
BUCKET = "raggity-bench"
PREFACE = "# Preface\n\nA paragraph the benchmark puts at the top of the file.\n\n"


def copy_corpus(source: Path, target: Path, files: int) -> None:
    """The first `files` pages of `source` (text and HTML, in name order)."""
    names = sorted(p for p in source.iterdir() if p.suffix in {".txt", ".html"} and p.is_file())
    target.mkdir(parents=True)
    for path in names[:files]:
        shutil.copy(path, target / path.name)


def child(engine: str, workers: int, corpus: Path, endpoint: str, edit: int) -> dict[str, Any]:
    from raggity.api.session import Raggity  # noqa: PLC0415 - the child's imports
    from raggity.config.loader import load_config  # noqa: PLC0415
    from raggity.store.lance_fts import TOKENIZER, create_fts_index  # noqa: PLC0415

    work = Path(tempfile.mkdtemp(prefix="ray-workers-"))
    docs = work / "docs"
    shutil.copytree(corpus, docs)
    storage = {"endpoint": endpoint, "region": "us-east-1", "allow_http": "true"}
    prefix = f"s3://{BUCKET}/{uuid.uuid4().hex[:12]}"
    lines = [
        "[index]",
        f'path = "{prefix}"',
        "[index.storage]",
        *(f'{k} = "{v}"' for k, v in storage.items()),
        "[ingest]",
        f'engine = "{"ray" if engine == "ray" else "local"}"',
    ]
    (work / "raggity.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if engine == "ray":
        from raggity.pipeline.ingest.ray_local import connect  # noqa: PLC0415

        # One CPU for the reading actor and the writers, one per embedding actor (ray_rows.cluster_plan).
        connect(None, cpus=workers + 1)
    session = Raggity(load_config(work / "raggity.toml"))
    session.models.embedder.embed(["warm up"])  # the driver's model load is not the ingest's
    started = time.perf_counter()
    first = session.ingest([docs])
    first_s = time.perf_counter() - started
    for path in sorted(docs.iterdir())[:edit]:
        path.write_text(PREFACE + path.read_text(encoding="utf-8", errors="replace"), encoding="utf-8")
    started = time.perf_counter()
    again = session.ingest([docs])
    again_s = time.perf_counter() - started
    fts = _fts(engine, workers, f"{prefix}/lancedb/chunks.lance", storage, TOKENIZER, create_fts_index)
    shutil.rmtree(work, ignore_errors=True)
    return {
        "engine": engine if engine == "local" else f"ray x{workers}",
        "files": first.added,
        "chunks": first.chunks_written,
        "first_s": round(first_s, 2),
        "chunks_per_s": round(first.chunks_written / first_s, 1),
        "edited": again.changed,
        "edited_chunks_embedded": again.chunks_written,
        "edited_s": round(again_s, 2),
        **fts,
    }


def _fts(
    engine: str, workers: int, uri: str, storage: dict[str, str], tokenizer: dict[str, Any], build: Any
) -> dict[str, Any]:
    import lance  # noqa: PLC0415

    dataset = lance.dataset(uri, storage_options=storage)
    fragments = len(dataset.get_fragments())
    started = time.perf_counter()
    if engine == "local":
        build(dataset)
    else:
        import lance_ray  # noqa: PLC0415

        lance_ray.create_scalar_index(
            uri,
            column="search_text",
            index_type="INVERTED",
            replace=True,
            num_workers=workers,
            storage_options=storage,
            **tokenizer,
        )
    return {"fts_fragments": fragments, "fts_s": round(time.perf_counter() - started, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/usr/share/doc/git-doc"))
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--edit", type=int, default=10)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--child", nargs=4, metavar=("ENGINE", "WORKERS", "CORPUS", "ENDPOINT"))
    args = parser.parse_args()
    if args.child:
        engine, workers, corpus, endpoint = args.child
        print(json.dumps(child(engine, int(workers), Path(corpus), endpoint, args.edit)))
        return

    from moto.server import ThreadedMotoServer  # noqa: PLC0415 - the parent's only import

    os.environ.update(CREDENTIALS)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the server's request log
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ray-workers-corpus-") as folder:
        try:
            host, port = server.get_host_and_port()
            endpoint = f"http://{host}:{port}"
            import boto3  # noqa: PLC0415

            boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket=BUCKET)
            corpus = Path(folder) / "corpus"
            copy_corpus(args.corpus, corpus, args.files)
            runs = [("local", 1)] + [("ray", int(n)) for n in args.workers.split(",")]
            for engine, workers in runs:
                done = subprocess.run(
                    [sys.executable, "-m", "bench.ray_workers", "--edit", str(args.edit), "--child",
                     engine, str(workers), str(corpus), endpoint],
                    cwd=ROOT,
                    env={**os.environ, "PYTHONPATH": str(ROOT)},
                    capture_output=True,
                    text=True,
                    check=False,
                )  # fmt: skip
                if done.returncode != 0:
                    rows.append({"engine": f"{engine} x{workers}", "error": done.stderr.strip()[-600:]})
                else:
                    rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
                print(json.dumps(rows[-1]), flush=True)
        finally:
            server.stop()
    keys = ["engine", "files", "chunks", "first_s", "chunks_per_s", "edited_chunks_embedded", "edited_s"]
    keys += ["fts_fragments", "fts_s"]
    print("| " + " | ".join(keys) + " |")
    for row in rows:
        print("| " + " | ".join(str(row.get(k, "")) for k in keys) + " |")


if __name__ == "__main__":
    main()
