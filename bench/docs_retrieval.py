"""What retrieval hands the answer step for documentation questions, without asking the model.

    python -m bench.docs_retrieval SET --index INDEX [--k 5] [--out FILE.jsonl] [-c raggity.toml]

SET is a folder that `python -m bench.docs_questions build` wrote (OUT/NAME: docs/, beir/, ooc/).
SET/docs is indexed through `rag ingest`'s path (INDEX is reused when it already holds it), then
every answerable question of SET/beir is searched as `rag ask` searches it (hybrid, reranked, the
config's top_k unless --k). Per question it records the best rank of a gold page among the chunks
and whether the gold answer's key facts (bench/docs_questions.py) appear in the chunks handed
over; the summary counts both. It loads no language model, so an A/B of an ingest or retrieval
change over every question of a set takes minutes, not the hour an answer run takes.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.docs_ask import relative_source
from bench.docs_questions import fact_present
from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.config.schema import IndexConfig


def question_rows(beir: Path) -> list[dict[str, Any]]:
    """The answerable questions of a docs_questions set, with their gold pages and key facts."""
    lines = (beir / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [row for row in map(json.loads, lines) if not row["impossible"]]


def retrieval_row(session: Raggity, question: dict[str, Any], root: Path, k: int | None) -> dict[str, Any]:
    hits = session.search(question["question"], k=k).candidates
    pages = [relative_source(hit.chunk.source, root) for hit in hits]
    text = "\n".join(f"{hit.chunk.heading}\n{hit.chunk.text}" for hit in hits)
    facts = question["key_facts"]
    found = [fact for fact in facts if fact_present(fact, text)]
    gold_ranks = [rank for rank, page in enumerate(pages, 1) if page in question["gold"]]
    return {
        "id": question["_id"],
        "question": question["question"],
        "gold": question["gold"],
        "gold_rank": gold_ranks[0] if gold_ranks else None,
        "facts": facts,
        "facts_found": found,
        "handed": [f"{page} | {hit.chunk.heading}" for page, hit in zip(pages, hits, strict=True)],
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "questions": len(rows),
        "gold_page_handed": sum(r["gold_rank"] is not None for r in rows),
        "gold_page_first": sum(r["gold_rank"] == 1 for r in rows),
        "some_key_fact_handed": sum(bool(r["facts_found"]) for r in rows),
        "key_facts_handed": f"{sum(len(r['facts_found']) for r in rows)}/{sum(len(r['facts']) for r in rows)}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("set_dir", type=Path, help="a docs_questions set: OUT/NAME")
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--k", type=int, help="chunks handed over (default: [retrieval] top_k)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("-c", "--config", type=Path)
    args = parser.parse_args()
    docs = args.set_dir / "docs"
    config = load_config(args.config)
    session = Raggity(replace(config, index=IndexConfig(str(args.index.resolve())), source=config.source))
    print(f"ingested {docs}: {session.ingest([docs])}", flush=True)
    rows = [retrieval_row(session, q, docs, args.k) for q in question_rows(args.set_dir / "beir")]
    if args.out is not None:
        args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(json.dumps(summary(rows)), flush=True)


if __name__ == "__main__":
    main()
