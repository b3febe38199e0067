"""Graph build cost and graph retrieval effect on a sample of SQuAD 2.0 dev paragraphs.

    .venv/bin/python bench/graph.py [--paragraphs 40 | --paragraphs 0] [--questions 60]
                                    [--model qwen2.5-coder-0.5b-instruct] [--index DIR]

Indexes the sampled paragraphs (0: all of them), builds the entity graph with the chosen generator
(seconds per chunk, excluding model load), and compares document recall@5 of hybrid retrieval with
and without graph retrieval over the indexed paragraphs. With --index the index and graph persist,
so an interrupted full build resumes and later runs re-measure recall without rebuilding; the
seconds per chunk then cover only the chunks extracted by this run. For a sample, the full build
time is extrapolated (not measured).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from raggity.api.evaluate import ranked_documents
from raggity.api.session import Raggity
from raggity.config.schema import Config, GenerationConfig, IndexConfig
from raggity.core.trace import TraceRecorder
from raggity.core.types import TextDocument
from raggity.evaluation.dataset import CorpusDoc, load_beir
from raggity.pipeline.graph.build import GraphBuildStatus, live_chunk_ids
from raggity.retrieval.graph_model import load_graph

DATASET = Path("/work/shared/eval/squad2-dev")


def recall_at(session: Raggity, questions: list[tuple[str, set[str]]], k: int) -> float:
    hits = 0
    for text, gold in questions:
        found = session.searcher.retrieve(text, TraceRecorder(), rerank=False)
        hits += bool(gold & set(ranked_documents(found, k)))
    return hits / max(len(questions), 1)


def _log(status: GraphBuildStatus, last: list[GraphBuildStatus]) -> None:
    last[:] = [status]
    if status.done % 25 == 0 or status.done == status.total:
        print(f"{status.done}/{status.total} chunks, {status.seconds:.0f} s", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--paragraphs", type=int, default=40)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--model", default=GenerationConfig().model)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--index", type=Path, help="persistent index folder (default: a temporary one)")
    args = parser.parse_args()

    data = load_beir(DATASET)
    rng = random.Random(args.seed)
    # Whole articles (titles) in turn, so that sampled paragraphs share entities as in the collection.
    titles = sorted({d.title for d in data.corpus})
    rng.shuffle(titles)
    sample: list[CorpusDoc] = []
    for title in titles:
        sample.extend(d for d in data.corpus if d.title == title)
        if len(sample) >= args.paragraphs:
            break
    sample = sample[: args.paragraphs] if args.paragraphs > 0 else list(data.corpus)
    ids = {d.id for d in sample}
    questions = [(q.question, set(q.gold)) for q in data.questions if not q.impossible and set(q.gold) & ids]
    rng.shuffle(questions)
    questions = questions[: args.questions]

    with contextlib.ExitStack() as stack:
        tmp = str(args.index or stack.enter_context(tempfile.TemporaryDirectory(prefix="raggity-graph-")))
        base = Config()
        config = replace(
            base,
            index=IndexConfig(tmp),
            generation=replace(
                base.generation, model=args.model, max_tokens=args.max_tokens, temperature=0.0
            ),
            retrieval=replace(base.retrieval, rerank=False),
        )
        session = Raggity(config)
        session.index_documents([TextDocument(d.id, d.text, d.title) for d in sample])
        chunks = len(live_chunk_ids(session.layout))

        t0 = time.perf_counter()
        session.models.generator  # noqa: B018 - load outside the timed loop
        load_seconds = time.perf_counter() - t0
        last: list[GraphBuildStatus] = []
        update = session.indexer.graph_update()
        report = update.run(session.layout, lambda status: _log(status, last))
        loop_seconds = last[-1].seconds if last else 0.0
        per_chunk = loop_seconds / max(report.extracted, 1)
        graph = load_graph(session.layout.graph)

        without = recall_at(session, questions, 5)
        session.config = replace(config, retrieval=replace(config.retrieval, graph=True))
        with_graph = recall_at(session, questions, 5)

    full_paragraphs = len(data.corpus)
    full_chunks = chunks / len(sample) * full_paragraphs
    result = {
        "model": args.model,
        "paragraphs": len(sample),
        "chunks": chunks,
        "model_load_s": round(load_seconds, 1),
        "chunks_extracted_this_run": report.extracted,
        "extraction_seconds_this_run": round(loop_seconds, 1),
        "seconds_per_chunk": round(per_chunk, 2),
        "unparsed_replies": report.unparsed,
        "nodes": len(graph.nodes),
        "edges": len(graph.edges),
        "graph_chunks_processed": len(graph.processed()),
        "extrapolated_full_build": None
        if len(sample) == full_paragraphs
        else {
            "paragraphs": full_paragraphs,
            "chunks_estimated": round(full_chunks),
            "hours_estimated": round(full_chunks * per_chunk / 3600, 2),
            "note": "extrapolated from the sample's seconds/chunk; not measured",
        },
        "questions": len(questions),
        "recall@5_without_graph": round(without, 3),
        "recall@5_with_graph": round(with_graph, 3),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
