"""Prompt size before and after context focusing, on a few squad2-dev questions.

"Before" is the prompt of the whole selected chunks (as raggity built it until focusing); "after" is
the focused one the pipeline builds now. Tokens are counted with the generator's own tokenizer.

    python -m bench.answer_context [--questions 20] [--index /tmp/raggity-squad2-index]

Uses the index that bench/calibrate_answerability.py builds (or builds it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from raggity.api.evaluate import corpus_documents
from raggity.api.session import Raggity
from raggity.config.schema import Config, IndexConfig
from raggity.core.protocols import Generator
from raggity.core.trace import TraceRecorder
from raggity.core.types import Chunk
from raggity.evaluation.dataset import load_beir
from raggity.pipeline.answer.focus import focus_sources
from raggity.pipeline.answer.prompt import PromptSource, build_messages
from raggity.pipeline.answer.stages import expand_to_parents
from raggity.retrieval.selection import select_candidates

SHARED = Path(os.environ.get("RAGGITY_SHARED_EVAL", "/work/shared/eval"))


def prompt_tokens(model: Generator, question: str, chunks: Sequence[Chunk]) -> int:
    sources = [PromptSource(n, c, c.text) for n, c in enumerate(chunks, start=1)]
    return sum(model.count_tokens(m["content"]) for m in build_messages(question, sources))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--index", type=Path, default=Path("/tmp/raggity-squad2-index"))
    args = parser.parse_args()
    squad = load_beir(SHARED / "squad2-dev")
    session = Raggity(replace(Config(), index=IndexConfig(str(args.index.resolve()))), warn=lambda _: None)
    if not args.index.exists():
        session.index_documents(corpus_documents(squad))
    questions = random.Random(1).sample(
        [q.question for q in squad.questions if not q.impossible], args.questions
    )
    settings = session.settings()
    model = session.models.generator
    sizes: list[tuple[int, int]] = []
    for question in questions:
        found = session.searcher.retrieve(question, TraceRecorder())
        candidates = select_candidates(found, settings.top_k, settings.relevance_floor)
        chunks = (
            expand_to_parents(candidates, session.searcher.snapshot.table)
            if settings.parent_document
            else [c.chunk for c in candidates]
        )
        before = prompt_tokens(model, question, chunks)
        after = prompt_tokens(model, question, focus_sources(question, chunks))
        sizes.append((before, after))
    result = {
        "questions": len(sizes),
        "model": model.identity,
        "prompt_tokens_median": {
            "before": statistics.median(b for b, _ in sizes),
            "after": statistics.median(a for _, a in sizes),
        },
        "prompt_tokens_mean": {
            "before": round(statistics.mean(b for b, _ in sizes), 1),
            "after": round(statistics.mean(a for _, a in sizes), 1),
        },
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
