"""Indexes SciFact into an index folder and prints timing JSON; run as a child so peak RSS is its own."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from raggity.api.evaluate import corpus_documents
from raggity.api.session import Raggity
from raggity.config.schema import Config, IndexConfig
from raggity.evaluation.dataset import load_beir


def main(dataset: Path, index: Path) -> None:
    started = time.perf_counter()
    session = Raggity(Config(index=IndexConfig(str(index))))
    collection = load_beir(dataset)
    corpus = collection.corpus
    report = session.index_documents(corpus_documents(collection), rebuild=True)
    wall = time.perf_counter() - started
    print(
        json.dumps(
            {
                "documents": len(corpus),
                "chunks": report.chunks_written,
                "tokens": report.tokens_embedded,
                "wall_seconds": wall,
                "ingest_seconds": report.seconds,
                "embed_seconds": report.embed_seconds,
            }
        )
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
