"""Where documentation answers go wrong: each question of a docs_questions set, stage by stage.

    python -m bench.docs_diagnose SET_DIR --index INDEX [--ooc OOC_DIR] [--per-group N] [--seed 0]
                                  [--out FILE.jsonl] [-c raggity.toml]
                                  [--answers-from DETAILS.jsonl | --judgement-only]

INDEX is the folder `rag eval SET_DIR --answers --index INDEX` kept, so the questions are asked of the
very index the measured run used, drawn with the same seed and per-group size (the same sample). For
each question it records: the top 10 documents of `rag search`'s retrieval and the gold pages' ranks,
the chunks handed to the answer step and what focusing kept of them, the stage values of the trace
(coverage, the model's judgement), the answer and its citations, whether the key facts (see
bench/docs_questions.py) are in the gold page, the retrieved chunks, the focused text and the answer,
and from that a cause for every question that was not answered right:

- `abstained`: the retrieval floor or the coverage check declined before the model was asked;
- `retrieval`: the key facts are in none of the chunks handed to the answer step;
- `focus`: they are in those chunks, but not in what focusing kept of them;
- `judgement`: the model's judgement declined although the focused text held the key facts;
- `generation`: the model answered (or produced nothing usable) without the key facts it was shown.

It runs the pipeline's own stages (raggity.pipeline.answer.stages) one by one, so it follows them when they change.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.docs_ask import relative_source
from bench.docs_questions import fact_present, judge
from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.config.schema import IndexConfig
from raggity.core.trace import TraceRecorder
from raggity.core.types import StageTrace
from raggity.evaluation.answer_run import AnswerCase, sample_cases
from raggity.evaluation.dataset import load_beir
from raggity.pipeline.answer.budget import fit_to_budget, room_for_sources
from raggity.pipeline.answer.focus import focus_sources
from raggity.pipeline.answer.stages import build_prompt, coverage_stage, expand_to_parents, judge_stage
from raggity.retrieval.abstain import should_abstain
from raggity.retrieval.selection import select_candidates


def _held(facts: list[str], text: str) -> int:
    return sum(fact_present(f, text) for f in facts)


def _enough(held: int, facts: list[str]) -> bool:
    return bool(facts) and held * 2 >= len(facts)


def _stage(answer_trace: tuple[StageTrace, ...], name: str) -> dict[str, Any]:
    for stage in answer_trace:
        if stage.stage == name:
            return dict(stage.detail)
    return {}


def cause(row: dict[str, Any]) -> str:
    if row["right"]:
        return "right"
    if row["abstained"]:
        return "abstained"
    if not row["facts_in_chunks_ok"]:
        return "retrieval"
    if not row["facts_in_focus_ok"]:
        return "focus"
    if row["refused"] and "model-judgement" in row["stages"] and not row["judgement"].get("answerable", True):
        return "judgement"
    return "generation"


# The record of a question whose answer was not generated (--judgement-only): its stage values are
# read, its answer fields say nothing.
_NOT_ASKED: dict[str, Any] = {
    "answer": "",
    "abstained": False,
    "refused": False,
    "citations": [],
    "verified": False,
}


def _replayed(
    session: Raggity, case: AnswerCase, record: dict[str, Any], chunks: list[Any]
) -> dict[str, Any]:
    """The answer of a `rag eval --details` line, with the coverage and judgement values recomputed on
    the same sources (the judgement scores the prompt; nothing is generated)."""
    settings = session.settings()
    stages: list[str] = []
    coverage: dict[str, Any] = {}
    judgement: dict[str, Any] = {}
    if chunks:
        covered = coverage_stage(case.question, chunks, settings)
        coverage = dict(covered.detail)
        stages.append("coverage")
        if covered.value:
            model = session.models.generator
            focused = focus_sources(case.question, chunks)
            prompt = build_prompt(case.question, chunks, focused, model, settings).value
            judgement = dict(judge_stage(model, prompt, settings).detail)
            stages.append("model-judgement")
    return {
        "stages": stages,
        "coverage": coverage,
        "judgement": judgement,
        "citations_stage": {},
        "answer": record["answer"],
        "abstained": record["abstained"],
        "refused": record["refused"],
        "citations": record["citations"],
        "verified": record["verified"],
    }


def diagnose(
    session: Raggity,
    case: AnswerCase,
    q: dict[str, Any] | None,
    record: dict[str, Any] | None = None,
    docs: Path | None = None,
) -> dict[str, Any]:
    """`docs`: the folder `rag ingest` indexed (SET/docs), under which gold pages are named; an index
    that `rag eval` built from SET's corpus names its sources by corpus id already."""

    def named(source: str) -> str:
        return relative_source(source, docs) if docs is not None else source

    facts: list[str] = list(q["key_facts"]) if q else []
    gold: list[str] = list(q["gold"]) if q else []
    trace = TraceRecorder()
    candidates = session.searcher.retrieve(case.question, trace)
    ranked = list(dict.fromkeys(named(c.chunk.source) for c in candidates))
    settings = session.settings()  # the settings ask uses, to replay its stages
    abstain = should_abstain([c.dense_cosine for c in candidates], settings.sufficiency_floor)
    selected = [] if abstain else select_candidates(candidates, settings.top_k, settings.relevance_floor)
    table = session.searcher.snapshot.table
    parents = bool(selected) and settings.parent_document
    chunks = expand_to_parents(selected, table) if parents else [c.chunk for c in selected]
    focused = focus_sources(case.question, chunks) if chunks else []
    if focused:
        # What reaches the model: the focused sources that fit the prompt's source budget.
        model = session.models.generator
        budget = min(room_for_sources(case.question, model, settings.max_tokens), settings.source_tokens)
        focused = fit_to_budget(focused, model.count_tokens, budget)
    chunk_text = "\n".join(c.text for c in chunks)
    focus_text = "\n".join(c.text for c in focused)
    if record is not None:
        said = _replayed(session, case, record, chunks)
    else:
        answer = session.answer(case.question, candidates, trace, use_cache=False)
        said = {
            "stages": [s.stage for s in answer.trace],
            "coverage": _stage(answer.trace, "coverage"),
            "judgement": _stage(answer.trace, "model-judgement"),
            "citations_stage": _stage(answer.trace, "citations"),
            "answer": answer.text,
            "abstained": answer.abstained,
            "refused": answer.refused,
            "citations": [{"n": c.n, "source": c.source, "supported": c.supported} for c in answer.citations],
            "verified": answer.verified,
        }
    declined = said["abstained"] or said["refused"]
    right, held = judge(said["answer"], declined, facts) if q else (False, 0)
    row: dict[str, Any] = {
        "id": case.id,
        "group": case.group,
        "question": case.question,
        "key_facts": facts,
        "gold": gold,
        "top10": ranked[:10],
        "gold_rank": min((ranked.index(g) + 1 for g in gold if g in ranked), default=None),
        "handed": [{"source": named(c.source), "heading": c.heading, "chars": len(c.text)} for c in chunks],
        "gold_handed": any(named(c.source) in gold for c in chunks),
        "focused": [{"source": named(c.source), "text": c.text} for c in focused],
        "facts_in_chunks": _held(facts, chunk_text),
        "facts_in_chunks_ok": _enough(_held(facts, chunk_text), facts),
        "facts_in_focus": _held(facts, focus_text),
        "facts_in_focus_ok": _enough(_held(facts, focus_text), facts),
        **said,
        "declined": declined,
        "facts_in_answer": held,
        "right": right if q else None,
    }
    row["cause"] = cause(row) if case.group == "answerable" else ("declined" if declined else "answered")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("set_dir", type=Path)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--ooc", type=Path)
    parser.add_argument("--per-group", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("/tmp/docsq/diagnosis.jsonl"))
    parser.add_argument("-c", "--config", type=Path)
    parser.add_argument(
        "--only", default="", help="comma-separated question ids to run (default: the sample)"
    )
    parser.add_argument(
        "--answers-from", type=Path, help="a `rag eval --details` file: take its answers, generate none"
    )
    parser.add_argument(
        "--judgement-only",
        action="store_true",
        help="read the coverage and the judgement of every question and generate no answer "
        "(minutes, not an hour: for bench.judgement_by_set)",
    )
    args = parser.parse_args()
    dataset = load_beir(args.set_dir)
    unrelated = load_beir(args.ooc).queries if args.ooc else ()
    cases = sample_cases(dataset.questions, unrelated, args.per_group, args.seed)
    if args.only:
        wanted = set(args.only.split(","))
        cases = [c for c in cases if c.id in wanted]
    questions = {}
    for line in (args.set_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            obj = json.loads(line)
            questions[obj["_id"]] = obj
    config = load_config(args.config)
    config = replace(config, index=IndexConfig(str(args.index.resolve())), source=config.source)
    session = Raggity(config)
    records: dict[str, dict[str, Any]] = {}
    if args.answers_from is not None:
        for line in args.answers_from.read_text(encoding="utf-8").splitlines():
            if line.strip():
                obj = json.loads(line)
                records[obj["id"]] = obj
        cases = [c for c in cases if c.id in records]
    elif args.judgement_only:
        records = {c.id: _NOT_ASKED for c in cases}
    docs = args.set_dir.parent / "docs"
    docs = docs if docs.is_dir() else None
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as out:
        for case in cases:
            row = diagnose(session, case, questions.get(case.id), records.get(case.id), docs)
            if args.judgement_only:
                row.update(right=None, cause="not asked")
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            print(f"{row['cause']:10} {case.question[:70]}", flush=True)


if __name__ == "__main__":
    main()
