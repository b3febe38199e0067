"""Writes the calibration set that ships inside the package (raggity/evaluation/calibration_data/).

    python -m bench.calibration_set [--data ../shared/eval/squad2-dev]

`rag calibrate` asks these questions of these passages. All of it is SQuAD 2.0 (CC BY-SA 4.0; the
passages are Wikipedia's text under the same licence); SciFact, which the lab calibration used for
out-of-corpus questions, is CC BY-NC 2.0 and is not shipped. The articles alternate as in
bench/wiki_split.py (the 1st, 3rd, ... are indexed, the 2nd, 4th, ... are asked about, no choice by
hand), and only questions of the calibration split (sha256(id)[0] % 4 == 0) are used, so `rag eval
--answers` never asks one of them. Groups, sampled with a fixed seed:

- answerable: questions with an answer, asked of the indexed articles' paragraphs;
- impossible: on-topic questions those paragraphs do not answer (SQuAD 2.0's unanswerable ones);
- out_of_corpus: answerable questions about the other articles, which are never indexed.

Questions are written round robin over the groups, so that the first N of each group (`rag
calibrate --limit N`) and an interrupted run hold as many of each.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from pathlib import Path
from typing import Any

from raggity.evaluation.calibration_split import in_calibration_split

DEFAULT_DATA = Path(os.environ.get("RAGGITY_SHARED_EVAL", "/work/shared/eval")) / "squad2-dev"
OUT = Path(__file__).resolve().parent.parent / "raggity" / "evaluation" / "calibration_data"
SIZES = {"answerable": 300, "impossible": 300, "out_of_corpus": 200}
SEED = 0


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def build(data: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    corpus = _read_jsonl(data / "corpus.jsonl")
    titles = list(dict.fromkeys(d["title"] for d in corpus))
    indexed = set(titles[0::2])
    article = {d["_id"]: d["title"] for d in corpus}
    split = [q for q in _read_jsonl(data / "questions.jsonl") if in_calibration_split(q["_id"])]
    pools = {
        "answerable": [q for q in split if article[q["para"]] in indexed and not q["impossible"]],
        "impossible": [q for q in split if article[q["para"]] in indexed and q["impossible"]],
        "out_of_corpus": [q for q in split if article[q["para"]] not in indexed and not q["impossible"]],
    }
    rng = random.Random(SEED)
    picked = {name: rng.sample(pool, min(SIZES[name], len(pool))) for name, pool in pools.items()}
    questions = [
        {"id": q["_id"], "group": name, "question": q["question"], "answers": q["answers"]}
        for i in range(max(SIZES.values()))
        for name, rows in picked.items()
        if i < len(rows)
        for q in [rows[i]]
    ]
    passages = [
        {"id": d["_id"], "title": d["title"], "text": d["text"]} for d in corpus if d["title"] in indexed
    ]
    return passages, questions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    passages, questions = build(args.data)
    OUT.mkdir(parents=True, exist_ok=True)
    for name, rows in (("passages.jsonl", passages), ("questions.jsonl", questions)):
        (OUT / name).write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
    counts = {name: sum(q["group"] == name for q in questions) for name in SIZES}
    print(json.dumps({"passages": len(passages), "questions": counts}))


if __name__ == "__main__":
    main()
