"""`rag eval`: retrieval quality and speed on a BEIR-layout collection."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from raggity.cli.shared import ConfigOption, JsonOption, err, load, out


def eval_command(
    dataset: Annotated[
        Path, typer.Argument(help="Folder with corpus.jsonl, queries.jsonl and qrels/test.tsv.")
    ],
    config: ConfigOption = None,
    k: Annotated[int, typer.Option("--k", help="Cut-off for nDCG, Recall and MRR.", min=1)] = 10,
    index: Annotated[
        Path | None,
        typer.Option("--index", help="Keep the evaluation index in this folder (default: throw-away)."),
    ] = None,
    abstain_queries: Annotated[
        Path | None,
        typer.Option(
            "--abstain-queries",
            help="Another BEIR folder whose queries are unrelated to DATASET: "
            "reports how often each sufficiency_floor abstains on them.",
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Score retrieval on a BEIR collection: nDCG, Recall, MRR and latency for BM25, dense, hybrid, +rerank."""
    from raggity.api.evaluate import evaluate
    from raggity.cli.progress import RichIngestProgress
    from raggity.cli.render import print_json

    cfg = load(config)
    with RichIngestProgress(err) as progress:
        report = evaluate(
            dataset,
            cfg,
            k=k,
            index_dir=index,
            abstain_queries=abstain_queries,
            progress=progress,
            warn=lambda message: err.print(f"[yellow]warning:[/yellow] {escape(message)}"),
        )
    if json_out:
        print_json(out, asdict(report))
        return
    out.print(
        f"{report.dataset}: {report.documents} documents, {report.chunks} chunks, {report.queries} queries; "
        f"indexed in {report.index_seconds:.1f}s"
    )
    table = Table(show_header=True, header_style="bold")
    names = list(report.systems[0].metrics) if report.systems else []
    for column in ["system", *names, "p50 ms", "p95 ms"]:
        table.add_column(column, justify="left" if column == "system" else "right")
    for system in report.systems:
        table.add_row(
            system.name,
            *(f"{system.metrics[n]:.4f}" for n in names),
            f"{system.p50_ms:.1f}",
            f"{system.p95_ms:.1f}",
        )
    out.print(table)
    if report.gold_recall:
        out.print(
            "gold-paragraph recall (answerable questions): "
            + ", ".join(f"{name} {value:.3f}" for name, value in report.gold_recall.items())
        )
    if report.abstention:
        rows = Table(title="abstention by sufficiency_floor", header_style="bold")
        for column in ("floor", "answerable abstained", "unrelated abstained"):
            rows.add_column(column, justify="right")
        for row in report.abstention:
            mark = " (configured)" if abs(row.floor - report.configured_floor) < 1e-9 else ""
            unrelated = "-" if row.unrelated_abstained is None else f"{row.unrelated_abstained:.1%}"
            rows.add_row(f"{row.floor:.2f}{mark}", f"{row.answerable_abstained:.1%}", unrelated)
        out.print(rows)
