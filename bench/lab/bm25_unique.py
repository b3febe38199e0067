"""BM25 at a million chunks of recombined text (SciFact sentences drawn at random into chunks of
~1,000 characters, so no two chunks are copies), against bench/scale_index.py's repeated passages:
how many hits tie with the 30th, and the time of Bm25Reader.search for k=30 (docs/scaling.md, IVF_SQ
section). One-off: written for issue #45 on 27 Nov.

    PYTHONPATH=. nice -n 5 .venv/bin/python bench/lab/bm25_unique.py /tmp/bm25_unique 1000000
"""
import json, re, sys, time, statistics, random
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from raggity.core.types import Chunk, Location
from raggity.store.bm25_index import Bm25Writer, Bm25Reader, lexical_query_text
from bench.scale_index import QUERIES, SCIFACT
out = Path(sys.argv[1]); rows = int(sys.argv[2])
if not (out / "meta.json").exists():
    sentences = []
    for line in SCIFACT.open(encoding="utf-8"):
        sentences += [s for s in re.split(r"(?<=[.!?])\s+", json.loads(line)["text"]) if len(s) > 40]
    print("sentences", len(sentences), flush=True)
    rng = random.Random(0)
    out.mkdir(parents=True)
    w = Bm25Writer(out)
    t = time.perf_counter()
    batch = []
    for n in range(rows):
        text, parts = "", []
        while len(text) < 1000:
            parts.append(rng.choice(sentences)); text = " ".join(parts)
        batch.append(Chunk(f"c{n:08d}", f"f{n // 16}.md", text, "", Location(1, 2), f"p{n}", n % 16, 256))
        if len(batch) == 5000:
            w.add(batch); batch = []
    w.add(batch); w.commit(); w.close()
    print("indexed", rows, round(time.perf_counter() - t, 1), "s", flush=True)
r = Bm25Reader(out); s = r._searcher
for q in QUERIES:
    query = r._query(lexical_query_text(q))
    hits = s.search(query, 30, count=False).hits
    kth = hits[-1][0]
    more = s.search(query, 5000, count=False).hits
    print(f"{q[:40]:40s} tied with the 30th: {sum(1 for h in more if h[0] == kth)}")
took = []
for rnd in range(8):
    for q in QUERIES:
        t = time.perf_counter(); r.search(q, 30); took.append((time.perf_counter() - t) * 1000)
print("search k=30 median ms", round(statistics.median(took[5:]), 2))
