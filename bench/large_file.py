"""Peak memory of ingesting one very large text file: reading, chunking and both store writes.

    python -m bench.large_file [--mb 200]

The real embedder would need hours for 200 MB on a 2-core machine, so vectors come from a stand-in
that hashes each text to a unit vector: everything else (streamed reading, chunking, LanceDB and
Tantivy writes in 512-chunk batches, the manifest) is the real pipeline. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from raggity.api.session import Raggity
from raggity.config.schema import Config, IndexConfig
from raggity.pipeline.ingest.sources import file_source
from raggity.testing import HashEmbedder


def write_text(path: Path, megabytes: int) -> None:
    words = "river stone quiet lantern orbit copper meadow signal harbor velvet engine garden".split()
    rng = np.random.default_rng(0)
    line_no = 0
    with path.open("w", encoding="utf-8") as out:
        while out.tell() < megabytes * 1_000_000:
            line_no += 1
            body = " ".join(words[i] for i in rng.integers(0, len(words), size=int(rng.integers(5, 25))))
            out.write(f"Line {line_no}: {body}.\n" + ("\n" if line_no % 7 == 0 else ""))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="raggity-large-") as tmp:
        folder = Path(tmp)
        big = folder / "big.txt"
        write_text(big, args.mb)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        session = Raggity(Config(index=IndexConfig(str(folder / "index"))), embedder=HashEmbedder())
        started = time.perf_counter()
        # The file is far past the default max_file_chars on purpose: this measures streaming.
        source = file_source(big, max_chars=big.stat().st_size)
        report = session.indexer.index_sources([source], lambda _: True)
        print(
            json.dumps(
                {
                    "file_mb": round(big.stat().st_size / 1e6, 1),
                    "chunks": report.chunks_written,
                    "seconds": round(time.perf_counter() - started, 1),
                    "peak_rss_mb_before_ingest": round(before, 1),
                    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                    "skipped": [s.reason for s in report.skipped],
                }
            )
        )


if __name__ == "__main__":
    main()
