"""Keyword search alone, Tantivy against Lance's full-text index, on SciFact: nDCG@10 of each and how
often they agree (issue #30 asks the two BM25 backends to stay within 0.01 nDCG@10).

Each SciFact document is one unit (title, newline, text: what a chunk's search_text would be); no
chunking, no embeddings, so the difference measured is the keyword backend's alone.

    PYTHONPATH=. python -m bench.fts_backends [SCIFACT_FOLDER]

Prints one JSON object.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCIFACT = ROOT.parent / "shared" / "eval" / "scifact"
K = 10


def main() -> None:
    import lance  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415

    from raggity.core.types import Chunk, Location  # noqa: PLC0415
    from raggity.evaluation.dataset import load_beir  # noqa: PLC0415
    from raggity.evaluation.metrics import ndcg_at_k  # noqa: PLC0415
    from raggity.store.bm25_index import Bm25Reader, Bm25Writer  # noqa: PLC0415
    from raggity.store.lance_fts import LanceFtsReader, create_fts_index  # noqa: PLC0415

    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else SCIFACT
    data = load_beir(folder)
    chunks = [
        Chunk(
            doc.id,
            "scifact",
            f"{doc.title}\n{doc.text}" if doc.title else doc.text,
            "",
            Location(1, 1),
            "",
            0,
            1,
        )
        for doc in data.corpus
    ]
    with tempfile.TemporaryDirectory(prefix="raggity-bench-fts-") as tmp:
        started = time.perf_counter()
        writer = Bm25Writer(Path(tmp) / "tantivy")
        writer.add(chunks)
        writer.commit()
        writer.close()
        tantivy_build = time.perf_counter() - started
        started = time.perf_counter()
        table = pa.table({"id": [c.id for c in chunks], "search_text": [c.search_text for c in chunks]})
        dataset = lance.write_dataset(table, str(Path(tmp) / "chunks.lance"))
        create_fts_index(dataset)
        lance_build = time.perf_counter() - started
        backends: dict[str, Bm25Reader | LanceFtsReader] = {
            "tantivy": Bm25Reader(Path(tmp) / "tantivy"),
            "lance": LanceFtsReader(lance.dataset(str(Path(tmp) / "chunks.lance"))),
        }
        ndcg: dict[str, list[float]] = {name: [] for name in backends}
        seconds: dict[str, list[float]] = {name: [] for name in backends}
        ranked: dict[str, list[list[str]]] = {name: [] for name in backends}
        for query in data.queries:
            for name, reader in backends.items():
                started = time.perf_counter()
                ids = [cid for cid, _ in reader.search(query.text, K)]
                seconds[name].append(time.perf_counter() - started)
                ranked[name].append(ids)
                ndcg[name].append(ndcg_at_k(ids, data.qrels[query.id], K))
    same_top1 = sum(
        bool(a) and bool(b) and a[0] == b[0] for a, b in zip(ranked["tantivy"], ranked["lance"], strict=True)
    )
    overlap = [len(set(a) & set(b)) for a, b in zip(ranked["tantivy"], ranked["lance"], strict=True)]
    result = {
        "documents": len(chunks),
        "queries": len(data.queries),
        "ndcg_at_10": {name: round(statistics.fmean(values), 4) for name, values in ndcg.items()},
        "ndcg_difference": round(statistics.fmean(ndcg["lance"]) - statistics.fmean(ndcg["tantivy"]), 4),
        "same_top1_share": round(same_top1 / len(data.queries), 3),
        "mean_top10_overlap": round(statistics.fmean(overlap), 2),
        "median_query_ms": {name: round(1000 * statistics.median(v), 2) for name, v in seconds.items()},
        "build_seconds": {"tantivy": round(tantivy_build, 2), "lance": round(lance_build, 2)},
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
