"""`make bench-answers`: the end-to-end answer benchmark at a fixed size, comparable between commits.

    python -m bench.answers [--per-group 200] [--seed 0] [--model NAME]

Runs `rag eval ../shared/eval/squad2-dev --answers --abstain-queries ../shared/eval/scifact` with the
default config (no raggity.toml of yours is read), prints its table, and writes the report with the
commit and the command to bench/results/answers.json, and one line per question to
bench/results/answers-details.jsonl. It is long: with 200 per group and the default 1.5B model, the
600 questions took 28 minutes on an idle 2-core machine (a shared machine takes several times that).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "eval"
SQUAD = Path(os.environ.get("RAGGITY_SQUAD_DATASET", SHARED / "squad2-dev"))
UNRELATED = Path(os.environ.get("RAGGITY_UNRELATED_DATASET", SHARED / "scifact"))
RESULTS = ROOT / "bench" / "results"
RAG = Path(sys.executable).parent / "rag"


def _commit() -> str:
    result = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return result.stdout.strip() or "unknown"


def run(per_group: int, seed: int, model: str | None) -> dict[str, Any]:
    RESULTS.mkdir(parents=True, exist_ok=True)
    details = RESULTS / "answers-details.jsonl"
    with tempfile.TemporaryDirectory(prefix="raggity-bench-answers-") as workdir:
        config = Path(workdir) / "raggity.toml"
        config.write_text("", encoding="utf-8")  # every key at its default
        command = [
            str(RAG), "eval", str(SQUAD), "--answers", "--abstain-queries", str(UNRELATED),
            "--per-group", str(per_group), "--seed", str(seed), "--details", str(details), "--json",
            "-c", str(config), *(["--model", model] if model else []),
        ]  # fmt: skip
        # stderr (progress, warnings) goes straight to the terminal.
        result = subprocess.run(command, cwd=workdir, stdout=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        sys.exit(result.returncode)
    report: dict[str, Any] = json.loads(result.stdout)
    return {
        "commit": _commit(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        # The throw-away config path means nothing later: say what it held instead.
        "command": " ".join(["rag", *command[1:]]).replace(f"-c {config}", "-c EMPTY.toml"),
        "report": report,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--per-group", type=int, default=200, help="questions per group (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="sample seed (default 0)")
    parser.add_argument("--model", default=None, help="generation model (default: the config default)")
    args = parser.parse_args()
    result = run(args.per_group, args.seed, args.model)
    (RESULTS / "answers.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"{result['commit']}: {result['command']}")
    print_report(result["report"])
    print(f"wrote {RESULTS / 'answers.json'} and {RESULTS / 'answers-details.jsonl'}")


def print_report(raw: dict[str, Any]) -> None:
    """The report as `rag eval --answers` prints it."""
    from rich.console import Console  # noqa: PLC0415 - each measurement imports what it measures
    from rich.text import Text  # noqa: PLC0415 - each measurement imports what it measures

    from raggity.api.answer_eval import AnswerReport  # noqa: PLC0415 - each measurement imports what it measures
    from raggity.cli.eval_command import answer_heading, answer_table  # noqa: PLC0415 - each measurement imports what it measures
    from raggity.evaluation.answer_run import GroupScore  # noqa: PLC0415 - each measurement imports what it measures

    report = AnswerReport(**{**raw, "groups": tuple(GroupScore(**g) for g in raw["groups"])})
    console = Console(highlight=False, soft_wrap=True)
    console.print(Text(answer_heading(report)))
    console.print(answer_table(report))


if __name__ == "__main__":
    main()
