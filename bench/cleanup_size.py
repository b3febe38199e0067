"""What cleanup saves (issue #45 item 4): an index edited over many ingests, measured with the cleanup
off, then after `rag compact --keep 0`, and with the cleanup after each ingest on; on a local folder
and on an S3 server (moto on 127.0.0.1, started here). Sizes are bytes under the index (all versions,
manifests and CURRENT on the store).

    PYTHONPATH=. nice -n 5 .venv/bin/python -m bench.cleanup_size [--files 40] [--rounds 10]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from raggity.api.compact import compact_index
from raggity.api.session import Models, Raggity
from raggity.config.schema import Config, IndexConfig, IngestConfig

WORDS = (
    "alpha beta gamma delta river mountain quartz copper violin harbor lantern meadow engine signal orbit "
    "canyon glacier thunder pepper maple falcon granite saffron comet willow"
).split()


def text(seed: str, paragraphs: int) -> str:
    rng = random.Random(seed)
    body = "\n\n".join(" ".join(rng.choice(WORDS) for _ in range(60)) + "." for _ in range(paragraphs))
    return f"# {seed}\n\n{body}\n"


def edit(docs: Path, files: int, round_number: int) -> None:
    """A tenth of the files rewritten, one removed, one added."""
    rng = random.Random(round_number)
    for n in rng.sample(range(files), max(files // 10, 1)):
        path = docs / f"note{n:03d}.md"
        if path.exists():
            path.write_text(text(f"{n}-{round_number}", 4), encoding="utf-8")
    (docs / f"note{rng.randrange(files):03d}.md").unlink(missing_ok=True)
    (docs / f"extra{round_number:03d}.md").write_text(text(f"extra-{round_number}", 4), encoding="utf-8")


def local_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and p.name != "cache")


def store_size(server: Any, prefix: str) -> int:
    bucket, key = prefix.removeprefix("s3://").split("/", 1)
    pages = server.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=key + "/")
    return sum(item["Size"] for page in pages for item in page.get("Contents", []))


def run(
    index: IndexConfig, size: Callable[[], int], files: int, rounds: int, models: Models, work: Path
) -> dict[str, Any]:
    docs = work / "docs"
    shutil.rmtree(docs, ignore_errors=True)
    docs.mkdir(parents=True)
    for n in range(files):
        (docs / f"note{n:03d}.md").write_text(text(str(n), 4), encoding="utf-8")
    config = Config(index=index, ingest=IngestConfig(paths=[str(docs)]))
    session = Raggity(config, embedder=models.embedder, tokenizer=models.tokenizer)
    session.ingest([docs])
    for round_number in range(rounds):
        edit(docs, files, round_number)
        session.ingest([docs])
    grown = size()
    started = time.perf_counter()
    report = compact_index(config, keep_seconds=0)
    return {
        "after_rounds": grown,
        "after_compact": size(),
        "compact_seconds": round(time.perf_counter() - started, 2),
        "versions_removed": report.versions_removed,
        "manifests_removed": report.manifests_removed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    models = Models(Config())
    work = Path(tempfile.mkdtemp(prefix="raggity-cleanup-size-"))
    from moto.server import ThreadedMotoServer  # noqa: PLC0415 - only this benchmark needs it

    os.environ.update(
        {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}
    )
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        import boto3  # noqa: PLC0415 - only this benchmark needs it

        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        client.create_bucket(Bucket="bench")
        options = {"endpoint": endpoint, "region": "us-east-1", "allow_http": "true"}
        for name in ("local", "s3"):
            for after_ingest in (False, True):
                if name == "local":
                    folder = work / f"index-{after_ingest}"
                    index = IndexConfig(path=str(folder))
                    size = partial(local_size, folder)
                else:
                    prefix = f"s3://bench/{name}-{after_ingest}"
                    index = IndexConfig(path=prefix, storage=options)
                    size = partial(store_size, client, prefix)
                # keep 0: this benchmark is the only reader, so every replaced version may go at once.
                index = replace(index, keep_versions_seconds=0, compact_after_ingest=after_ingest)
                found = run(index, size, args.files, args.rounds, models, work)
                print(
                    f"{name:5} cleanup after ingest {'on ' if after_ingest else 'off'}: {found}", flush=True
                )
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
