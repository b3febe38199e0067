"""Questions about other Wikipedia articles: squad2-dev split by article, for `rag eval --answers`.

    python -m bench.wiki_split [--data ../shared/eval/squad2-dev] [--out /tmp/wikisplit]

SciFact claims are far from Wikipedia prose; a question about another Wikipedia article is the
unrelated question a person is likelier to ask, and the one where a sentence that echoes the
question with a source's term passed as verified (issue 32). squad2-dev's paragraphs name their
article in the `_id` ("Normans-000") and `title`. The articles, in the order the corpus lists them,
alternate: the 1st, 3rd, ... are indexed, the 2nd, 4th, ... are asked about. No choice by hand, so
nothing is tuned to which articles are close to which. It writes, under OUT (nothing is committed):

- `beir/`: the indexed half in the BEIR layout (corpus, queries, qrels, questions.jsonl with its
  answerable and impossible questions), the DATASET of `rag eval --answers`;
- `ooc/`: the other half's answerable questions, for `--abstain-queries` (a complete BEIR folder:
  their paragraphs are its corpus, never indexed).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

DEFAULT_DATA = Path(os.environ.get("RAGGITY_SHARED_EVAL", "/work/shared/eval")) / "squad2-dev"
DEFAULT_OUT = Path("/tmp/wikisplit")


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def _write_set(folder: Path, corpus: Sequence[dict[str, Any]], questions: Sequence[dict[str, Any]]) -> None:
    """A BEIR folder: its corpus, every question with a gold paragraph as a judged query."""
    _write_jsonl(folder / "corpus.jsonl", corpus)
    judged = [q for q in questions if q["gold"]]
    _write_jsonl(folder / "queries.jsonl", ({"_id": q["_id"], "text": q["question"]} for q in judged))
    qrels = ["query-id\tcorpus-id\tscore", *(f"{q['_id']}\t{g}\t1" for q in judged for g in q["gold"])]
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")


def split(data: Path, out: Path) -> dict[str, Any]:
    corpus = _read_jsonl(data / "corpus.jsonl")
    questions = _read_jsonl(data / "questions.jsonl")
    titles = list(dict.fromkeys(d["title"] for d in corpus))
    indexed = set(titles[0::2])
    article = {d["_id"]: d["title"] for d in corpus}
    inside = [q for q in questions if article[q["para"]] in indexed]
    asked = [q for q in questions if article[q["para"]] not in indexed and not q["impossible"]]
    _write_set(out / "beir", [d for d in corpus if d["title"] in indexed], inside)
    (out / "beir" / "questions.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in inside), encoding="utf-8"
    )
    _write_set(out / "ooc", [d for d in corpus if d["title"] not in indexed], asked)
    return {
        "indexed_articles": sorted(indexed),
        "asked_articles": sorted(set(titles) - indexed),
        "indexed_questions": len(inside),
        "out_of_corpus_questions": len(asked),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    print(json.dumps(split(args.data, args.out), ensure_ascii=False))


if __name__ == "__main__":
    main()
