"""Time to the first text `rag ask` shows, for whichever raggity is first on the path, so that two
commits can be compared in one run (docs/answers.md, "The model"; the runs so far:
docs/lab/answers-notebook.md, "The model").

    PYTHONPATH=<checkout of a commit> python <this checkout>/bench/lab/first_text.py --index DIR [--questions 20]

(run by path from outside the checkouts, so that `raggity` comes from PYTHONPATH)

Asks the first N answerable squad2-dev questions outside the calibration split (file order, so
every commit gets the same ones) of an index of the squad2-dev paragraphs (`rag eval` builds one;
pass it with --index), with the tree's default config and model, the model loaded before timing.
Prints one JSON line: medians of the first `on_token` call (what the person sees first), of the
model's first token (from the trace, when the tree records it) and of the whole answer. It uses only
`Raggity.ask`, so it runs against older commits too. Compare runs only within one session, as ratios.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import time
from functools import partial
from pathlib import Path

import raggity
from raggity.api.session import Raggity
from raggity.config.schema import Config, IndexConfig

SQUAD = Path(
    os.environ.get("RAGGITY_SQUAD_DATASET", Path(__file__).resolve().parents[2] / "shared/eval/squad2-dev")
)


def questions(n: int) -> list[str]:
    """The first `n` answerable questions outside the calibration split (raggity/evaluation/
    calibration_split.py, restated here because older commits do not have it)."""
    picked: list[str] = []
    for line in (SQUAD / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if not row["impossible"] and hashlib.sha256(row["_id"].encode("utf-8")).digest()[0] % 4 != 0:
            picked.append(row["question"])
        if len(picked) == n:
            break
    return picked


def _first_call(seen: list[float], _: str) -> None:
    if not seen:
        seen.append(time.perf_counter())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="an index of the squad2-dev paragraphs")
    parser.add_argument("--questions", type=int, default=20)
    args = parser.parse_args()
    session = Raggity(Config(index=IndexConfig(str(args.index.resolve()))))
    session.models.generator  # noqa: B018 - loaded outside the timings, as in a warm process
    session.ask("What is this about?", use_cache=False)  # warms llama.cpp's cache of the system prompt
    first: list[float] = []
    model_first: list[float] = []
    total: list[float] = []
    for question in questions(args.questions):
        seen: list[float] = []
        started = time.perf_counter()
        answer = session.ask(question, on_token=partial(_first_call, seen), use_cache=False)
        total.append(time.perf_counter() - started)
        first += [seen[0] - started] if seen else []
        stages = {t.stage: t for t in answer.trace}
        generated = stages.get("generate")
        if generated is not None and "first_token_ms" in generated.detail:
            before = sum(
                t.ms for t in answer.trace if t.stage not in ("generate", "generate-strict", "citations")
            )
            model_first.append((before + float(str(generated.detail["first_token_ms"]))) / 1000)
    print(
        json.dumps(
            {
                "tree": str(Path(raggity.__file__).parent.parent),
                "questions": args.questions,
                "answered": len(first),
                "first_text_p50_s": statistics.median(first) if first else None,
                "model_first_token_p50_s": statistics.median(model_first) if model_first else None,
                "total_p50_s": statistics.median(total),
            }
        )
    )


if __name__ == "__main__":
    main()
