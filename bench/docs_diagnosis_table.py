"""The diagnosis table of a bench.docs_diagnose run, as Markdown.

python -m bench.docs_diagnosis_table DIAGNOSIS.jsonl [more.jsonl ...] > diagnosis.md
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any


def _cell(text: str, limit: int) -> str:
    flat = " ".join(str(text).split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _judgement(row: dict[str, Any]) -> str:
    j = row.get("judgement") or {}
    if not j:
        c = row.get("coverage") or {}
        return f"coverage {c.get('coverage', '-')}" if c else "-"
    return (
        f"p_refuse {j.get('refusal_probability')} (open {j.get('refusal_opening')}, yes/no {j.get('yes_no')})"
    )


def table(rows: list[dict[str, Any]]) -> str:
    answerable = [r for r in rows if r["group"] == "answerable"]
    causes = Counter(r["cause"] for r in answerable)
    lines = [
        f"Answerable: {len(answerable)}; " + ", ".join(f"{k} {v}" for k, v in causes.most_common()),
        "",
        "| question | key facts | gold (rank in top 10) | top 3 retrieved | handed to focus | facts in chunks / focus / "
        "answer | judgement | answer | right | cause |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in answerable:
        handed = "; ".join(f"{h['source']} ({h['chars']})" for h in r["handed"])
        n = len(r["key_facts"])
        facts = f"{r['facts_in_chunks']}/{n} · {r['facts_in_focus']}/{n} · {r['facts_in_answer']}/{n}"
        lines.append(
            "| "
            + " | ".join(
                [
                    _cell(r["question"], 70),
                    _cell(", ".join(f"`{f}`" for f in r["key_facts"]), 80),
                    _cell(f"{', '.join(r['gold'])} ({r['gold_rank'] or '-'})", 60),
                    _cell(", ".join(r["top10"][:3]), 80),
                    _cell(handed, 120),
                    facts,
                    _cell(_judgement(r), 60),
                    _cell(r["answer"], 160),
                    "yes" if r["right"] else "no",
                    r["cause"],
                ]
            )
            + " |"
        )
    lines += ["", "What focusing kept, per question (what the model read):", ""]
    for r in answerable:
        lines.append(f"### {r['question']}")
        lines.append("")
        lines.append(f"cause: **{r['cause']}**; key facts {r['key_facts']}")
        lines.append("")
        for f in r["focused"]:
            lines.append(f"- `{f['source']}`: {_cell(f['text'], 600)}")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    rows = [
        json.loads(line)
        for file in args.files
        for line in file.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    print(table(rows))


if __name__ == "__main__":
    main()
