"""Replays the answers of a `rag eval --answers --details` run through today's citation checks.

    python -m bench.lab.replay_citations DETAILS.jsonl --dataset DIR --index IDX [--ooc OOC_DIR] [--out F.jsonl]

Citation checks run after the answer is written and change nothing the model reads, so a run's
answers can be checked again without generating them: each answered question is asked once more
of the same index, by the real pipeline (retrieval, focusing, the prompt's sources within the real
model's token budget), with a generator that writes the recorded answer and never refuses. What
changes is what the checks attach: the figures before (from the file) and after, per group:
answered, verified, right and verified, right but unverified, and sources attached by meaning,
with those that are not a gold paragraph (for out-of-corpus questions every source is wrong).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from raggity.api.session import Raggity
from raggity.config.schema import Config, IndexConfig
from raggity.core.protocols import Generator
from raggity.testing import RecordingGenerator

Messages = Sequence[dict[str, str]]


class Replay(RecordingGenerator):
    """Writes the recorded answer to whatever it is asked, and never refuses (only answered questions
    are replayed: the judgement let them through); counts tokens as the real model does."""

    def __init__(self, inner: Generator) -> None:
        super().__init__(inner)
        self.answer = ""

    def continuation_probability(self, messages: Messages, text: str, *, fresh: bool = False) -> float:
        return 0.0

    def stream(self, messages: Messages, **_: object) -> Iterator[str]:
        yield from re.findall(r"\S+\s*", self.answer)


def _gold(dataset: Path) -> dict[str, set[str]]:
    gold: dict[str, set[str]] = {}
    for line in (dataset / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        query, doc, score = line.split("\t")
        if int(score) > 0:
            gold.setdefault(query, set()).add(doc)
    return gold


def replay(details: Path, dataset: Path, index: Path, out: Path | None) -> dict[str, Any]:
    config = replace(Config(), index=IndexConfig(str(index.resolve())))
    loader = Raggity(config, warn=lambda _: None)
    replayer = Replay(loader.models.generator)
    session = Raggity(config, embedder=loader.models.embedder, generator=replayer, warn=lambda _: None)
    gold = _gold(dataset)
    rows = [json.loads(line) for line in details.read_text(encoding="utf-8").splitlines() if line.strip()]
    results = []
    for row in rows:
        if row["declined"]:
            continue
        replayer.answer = row["answer"]
        answer = session.ask(row["question"], use_cache=False)
        golds = gold.get(row["id"], set()) if row["group"] == "answerable" else set()
        meaning = [c for c in answer.citations if getattr(c, "paraphrases", ())]  # none before meaning.py
        results.append(
            {
                "id": row["id"],
                "group": row["group"],
                "question": row["question"],
                "answer": row["answer"],
                "correct": row["correct"],
                "verified_before": row["verified"],
                "verified_after": answer.verified and not answer.declined,
                "declined_after": answer.declined,
                "by_meaning": [(c.source, c.paraphrases) for c in meaning],
                "by_meaning_wrong": sum(c.source not in golds for c in meaning),
                "unsupported_after": list(answer.unsupported_sentences),
            }
        )
    if out is not None:
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in results), encoding="utf-8")
    summary: dict[str, Any] = {}
    for group in dict.fromkeys(r["group"] for r in results):
        rs = [r for r in results if r["group"] == group]
        summary[group] = {
            "answered": len(rs),
            "verified_before": sum(r["verified_before"] for r in rs),
            "verified_after": sum(r["verified_after"] for r in rs),
            "right_verified_before": sum(bool(r["correct"]) and r["verified_before"] for r in rs),
            "right_verified_after": sum(bool(r["correct"]) and r["verified_after"] for r in rs),
            "right_unverified_before": sum(bool(r["correct"]) and not r["verified_before"] for r in rs),
            "right_unverified_after": sum(bool(r["correct"]) and not r["verified_after"] for r in rs),
            "attached_by_meaning": sum(len(r["by_meaning"]) for r in rs),
            "attached_by_meaning_not_gold": sum(r["by_meaning_wrong"] for r in rs),
        }
    return summary


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("details", type=Path)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    print(json.dumps(replay(args.details, args.dataset, args.index, args.out), indent=2))


if __name__ == "__main__":
    main()
