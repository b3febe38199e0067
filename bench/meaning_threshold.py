"""Calibrates MEANING_THRESHOLD (raggity/pipeline/answer/meaning.py) on squad2-dev's calibration split.

    python -m bench.meaning_threshold [--data ../shared/eval/squad2-dev] [--max-wrong 0.02]

A sentence no source supports word for word gets the source whose closest sentence is at least
MEANING_THRESHOLD in cosine (the configured embedder, the one `rag ask` searched with). Pairs, from
the answerable questions of the calibration split (sha256(id)[0] % 4 == 0, never drawn by
`rag eval --answers`):

- a claim: the question followed by its first gold answer ("In what country is Normandy located?
  France"): the fact in words other than the paragraph's, as a paraphrasing answer states it;
- right: the claim's cosine with the closest sentence of its gold paragraph;
- wrong: its cosine with the closest sentence of the article's other paragraphs (leaving out any
  sentence that holds the answer): the same topic, as retrieval gives it, but another fact.

The principle: a wrongly attached source is worse than none (it tells the reader a source says
what it does not), so the threshold is the lowest cosine at which at most MAX_WRONG of the claims
would get a wrong paragraph's sentence; the share of right pairs above it is reported, not chosen.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from raggity.config.schema import Config
from raggity.evaluation.calibration_split import in_calibration_split
from raggity.pipeline.answer.citations import numbers_held
from raggity.pipeline.answer.focus import document_sentences
from raggity.pipeline.model_loading import load_embedder

DEFAULT_DATA = Path(os.environ.get("RAGGITY_SHARED_EVAL", "/work/shared/eval")) / "squad2-dev"
MAX_WRONG = 0.02


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _holds(sentence: str, answers: Sequence[str]) -> bool:
    words = " ".join(re.findall(r"\w+", sentence.lower()))
    return any(" ".join(re.findall(r"\w+", a.lower())) in words for a in answers)


def threshold_for(wrong: Sequence[float], max_wrong: float) -> float:
    """The lowest cosine (to 2 decimals) at which at most `max_wrong` of the wrong scores reach it."""
    for step in range(101):
        t = step / 100
        if sum(w >= t for w in wrong) <= max_wrong * len(wrong):
            return t
    return 1.0


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--max-wrong", type=float, default=MAX_WRONG)
    args = parser.parse_args(argv)
    corpus = {d["_id"]: d for d in _read_jsonl(args.data / "corpus.jsonl")}
    questions = [
        q
        for q in _read_jsonl(args.data / "questions.jsonl")
        if not q["impossible"] and q["answers"] and in_calibration_split(q["_id"])
    ]
    sentences = {pid: document_sentences(d["text"]) for pid, d in corpus.items()}
    embedder = load_embedder(Config())
    flat = [(pid, s) for pid, ss in sentences.items() for s in ss]
    vectors = embedder.embed([s for _, s in flat])
    claims = embedder.embed([f"{q['question']} {q['answers'][0]}" for q in questions])
    asked = embedder.embed([q["question"] for q in questions])
    rows = []
    for q, claim, question in zip(questions, claims, asked, strict=True):
        gold, title = q["para"], corpus[q["para"]]["title"]
        text = f"{q['question']} {q['answers'][0]}"
        # The pipeline's rule: a paragraph without a number the claim states does not say it.
        held = {pid for pid, d in corpus.items() if d["title"] == title and numbers_held(text, d["text"])}
        # The pipeline's other rule: a sentence counts only where the claim is closer to it than
        # the question alone is (a claim that only says the question back adds nothing it says).
        cosines = np.where(vectors @ claim > vectors @ question, vectors @ claim, 0.0)
        right = max(
            (float(c) for (pid, _), c in zip(flat, cosines, strict=True) if pid == gold and pid in held),
            default=0.0,
        )
        others = [
            float(c)
            for (pid, s), c in zip(flat, cosines, strict=True)
            if pid != gold and pid in held and not _holds(s, q["answers"])
        ]
        rows.append((right, max(others, default=0.0)))
    right_scores, wrong_scores = [r for r, _ in rows], [w for _, w in rows]
    t = threshold_for(wrong_scores, args.max_wrong)
    report = {
        "principle": f"lowest cosine with at most {args.max_wrong:.0%} of claims closer to another paragraph",
        "embedder": embedder.identity,
        "claims": len(rows),
        "threshold": t,
        "right_at_threshold": round(sum(r >= t for r in right_scores) / len(rows), 4),
        "wrong_at_threshold": round(sum(w >= t for w in wrong_scores) / len(rows), 4),
        "right_quartiles": [round(float(x), 3) for x in np.percentile(right_scores, [25, 50, 75])],
        "wrong_quartiles": [round(float(x), 3) for x in np.percentile(wrong_scores, [25, 50, 75])],
        "by_threshold": {
            f"{x:.2f}": {
                "right": round(sum(r >= x for r in right_scores) / len(rows), 4),
                "wrong": round(sum(w >= x for w in wrong_scores) / len(rows), 4),
            }
            for x in (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)
        },
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
