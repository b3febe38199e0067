"""Recall and time of the vector index's search on a kept index, as a search asks it (30 candidates)
and as bench/scale_index.py measured it (10), for re-ranking settings (store/vector_index.AnnSearch).

    PYTHONPATH=. nice -n 5 .venv/bin/python -m bench.ann_recall --index DIR [--out FILE]

DIR is an index `bench/scale_index.py --keep` left (e.g. /tmp/scale_index/rows1000000/index). The
queries are the same 100 held-out SciFact passages, embedded for real; the truth is exact search over
the table's vector column (read whole here, 1.5 GB at a million rows). recall@10 is the top 10 of the
result against the exact top 10; recall@30, the whole result of a k=30 search against the exact top 30.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.scale_index import passages

# (k, nprobes, refine_factor): as bench/scale_index.py measures (k=10), and as a search asks (k=30)
# with the default settings (store/vector_index.AnnSearch), fewer or more partitions, no re-ranking.
SETTINGS = [(10, 20, 2), (30, 10, 2), (30, 20, 1), (30, 20, 2), (30, 30, 2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--sample", type=int, default=512, help="as bench/scale_index.py: the bases")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    import lance  # noqa: PLC0415

    from raggity.api.session import Raggity  # noqa: PLC0415
    from raggity.config.schema import Config, IndexConfig  # noqa: PLC0415
    from raggity.store.layout import IndexLayout  # noqa: PLC0415
    from raggity.store.vector_index import AnnSearch  # noqa: PLC0415
    from raggity.store.vector_table import VectorTableReader  # noqa: PLC0415

    texts = passages(args.sample + args.queries)[args.sample :]
    models = Raggity(Config(index=IndexConfig(str(args.index.parent / "unused")))).models
    queries = np.asarray(models.embed(texts), dtype=np.float32)
    table = IndexLayout(args.index).table
    columns = lance.dataset(str(table)).to_table(columns=["id", "vector"])
    ids = columns["id"].to_pylist()
    flat = columns["vector"].combine_chunks().values.to_numpy(zero_copy_only=False)
    matrix = np.ascontiguousarray(flat, dtype=np.float32).reshape(len(ids), -1)
    del columns, flat
    truth = [[ids[i] for i in np.argsort(-(matrix @ q))[:30]] for q in queries]
    del matrix
    rows: list[dict[str, Any]] = []
    for k, nprobes, refine in SETTINGS:
        reader = VectorTableReader(table, ann=AnnSearch(nprobes, refine))
        reader.nearest(queries[0], k)
        at10, at30, took = [], [], []
        for q, exact in zip(queries, truth, strict=True):
            began = time.perf_counter()
            found = [cid for cid, _ in reader.nearest(q, k)]
            took.append(1000 * (time.perf_counter() - began))
            at10.append(len(set(found[:10]) & set(exact[:10])) / 10)
            if k >= 30:
                at30.append(len(set(found[:30]) & set(exact[:30])) / 30)
        rows.append(
            {
                "k": k,
                "nprobes": nprobes,
                "refine_factor": refine,
                "reranked": k * refine,
                "recall_at_10": round(float(np.mean(at10)), 4),
                "recall_at_30": round(float(np.mean(at30)), 4) if at30 else None,
                "ms_median": round(statistics.median(took), 1),
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    report = {"index": str(args.index), "rows": len(ids), "load_average": os.getloadavg(), "settings": rows}
    text = json.dumps(report, indent=1) + "\n"
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
