"""`rag eval`: retrieval quality and speed on a BEIR-layout collection, or with --answers the whole ask
pipeline's answers on its questions."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from raggity.api import DEFAULT_PER_GROUP, DEFAULT_SEED, RaggityError
from raggity.cli.lazy_bar import LazyBar
from raggity.cli.shared import ConfigOption, JsonOption, err, load, out, warn

if TYPE_CHECKING:
    from raggity.api import AnswerRecord, GroupScore
    from raggity.api.answer_eval import AnswerReport


def eval_command(
    dataset: Annotated[
        Path,
        typer.Argument(
            help="Folder with corpus.jsonl, queries.jsonl and qrels/test.tsv (and questions.jsonl for --answers)."
        ),
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
            "reports how often each sufficiency_floor abstains on them; "
            "with --answers, they are asked as the out-of-corpus group.",
        ),
    ] = None,
    answers: Annotated[
        bool,
        typer.Option(
            "--answers",
            help="Score answers instead of retrieval: ask sampled questions.jsonl questions "
            "(answerable and unanswerable) and --abstain-queries through the whole ask pipeline.",
        ),
    ] = False,
    per_group: Annotated[
        int | None,
        typer.Option(
            "--per-group",
            help=f"With --answers: questions asked per group (default: {DEFAULT_PER_GROUP}).",
            min=1,
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help=f"With --answers: seed that draws the question samples (default: {DEFAULT_SEED}).",
            min=0,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", help="With --answers: generation model to use instead of [generation] model."
        ),
    ] = None,
    details: Annotated[
        Path | None,
        typer.Option(
            "--details",
            help="With --answers: write one JSON line per question (answer, scores) to this file.",
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Score retrieval on a BEIR collection: nDCG, Recall, MRR and latency for BM25, dense, hybrid, +rerank.

    With --answers, score the answers of the whole ask pipeline instead: correct, F1, declined, citations,
    time to first token.
    """
    if not answers:
        for flag, value in (
            ("--per-group", per_group),
            ("--seed", seed),
            ("--model", model),
            ("--details", details),
        ):
            if value is not None:
                raise typer.BadParameter("only with --answers", param_hint=flag)
        _retrieval(dataset, config, k, index, abstain_queries, json_out)
        return
    _answers(
        dataset,
        config,
        index,
        abstain_queries,
        DEFAULT_PER_GROUP if per_group is None else per_group,
        DEFAULT_SEED if seed is None else seed,
        model,
        details,
        json_out,
    )


def _retrieval(
    dataset: Path,
    config: Path | None,
    k: int,
    index: Path | None,
    abstain_queries: Path | None,
    json_out: bool,
) -> None:
    from raggity.api.evaluate import evaluate  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.progress import RichIngestProgress  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain, print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

    cfg = load(config)
    with RichIngestProgress(err) as progress:
        report = evaluate(
            dataset, cfg, k=k, index_dir=index, abstain_queries=abstain_queries, progress=progress, warn=warn
        )
    if json_out:
        print_json(out, asdict(report))
        return
    out.print(
        plain(
            f"{report.dataset}: {report.documents} documents, {report.chunks} chunks, {report.queries} queries; "
            f"indexed in {report.index_seconds:.1f}s"
        )
    )
    table = Table(show_header=True, header_style="bold")
    names = list(report.systems[0].metrics) if report.systems else []
    for column in ["system", *names, "p50 ms", "p95 ms"]:
        table.add_column(column, justify="left" if column == "system" else "right")
    for system in report.systems:
        table.add_row(
            plain(system.name),
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


class _AnswerDisplay(LazyBar):
    """The question bar on stderr, and the --details file written one line per answer as it comes.

    `before` runs when the first question starts: it closes the ingest bar, since rich shows one live
    display at a time.
    """

    def __init__(self, console: Console, details: IO[str] | None, before: Callable[[], None]) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: PLC0415 - rich's live display loads only for a bar, not for every command

        self._details = details
        self._before = before
        self._progress = Progress(
            TextColumn("[bold]answers"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("questions"),
            TimeElapsedColumn(),
            console=console,
        )
        self._task = self._progress.add_task("answers", total=None)

    def begin(self, total: int) -> None:
        self._before()
        self._progress.start()
        self._progress.update(self._task, total=total)

    def answered(self, record: AnswerRecord) -> None:
        if self._details is not None:
            self._details.write(json.dumps(asdict(record), ensure_ascii=False) + "\n")
            self._details.flush()
        self._progress.update(self._task, advance=1)


def _open_details(path: Path | None) -> IO[str] | None:
    if path is None:
        return None
    try:
        return path.open("w", encoding="utf-8")
    except OSError as exc:
        raise RaggityError(
            f"cannot write {path}: {exc.strerror or exc}", "pass a writable --details path"
        ) from None


def _answers(
    dataset: Path,
    config: Path | None,
    index: Path | None,
    abstain_queries: Path | None,
    per_group: int,
    seed: int,
    model: str | None,
    details: Path | None,
    json_out: bool,
) -> None:
    from raggity.api.answer_eval import evaluate_answers  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.api.session import with_generation_model  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.progress import RichIngestProgress  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain, print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

    cfg = load(config)
    if model is not None:
        cfg = with_generation_model(cfg, model)
    details_file = _open_details(details)
    try:
        with (
            RichIngestProgress(err) as ingest,
            _AnswerDisplay(err, details_file, lambda: ingest.__exit__(None, None, None)) as display,
        ):
            report = evaluate_answers(
                dataset,
                cfg,
                per_group=per_group,
                seed=seed,
                abstain_queries=abstain_queries,
                index_dir=index,
                progress=ingest,
                answers=display,
                warn=warn,
            )
    finally:
        if details_file is not None:
            details_file.close()
    if json_out:
        print_json(out, asdict(report))
        return
    out.print(plain(answer_heading(report)))
    out.print(answer_table(report))


def answer_heading(report: AnswerReport) -> str:
    return (
        f"{report.dataset}: {report.documents} documents, {report.chunks} chunks, indexed in "
        f"{report.index_seconds:.1f}s; model {report.model}; seed {report.seed}, up to {report.per_group} per group"
    )


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def answer_table(report: AnswerReport) -> Table:
    """One column per question group and one row per measure, so it fits 80 columns; cells are Text,
    so nothing in them is read as markup."""
    from raggity.cli.render import plain  # noqa: PLC0415 - deferred so `rag --help` stays instant

    rows: tuple[tuple[str, Callable[[GroupScore], str]], ...] = (
        ("questions", lambda g: str(g.n)),
        ("correct", lambda g: _share(g.correct)),
        ("token F1", lambda g: "-" if g.f1 is None else f"{g.f1:.3f}"),
        ("declined", lambda g: _share(g.declined)),
        ("declined, closest shown", lambda g: _share(g.declined_with_closest)),
        ("cites a gold paragraph", lambda g: _share(g.cites_gold)),
        ("declined, reply had no source", lambda g: _share(g.unsupported)),
        ("marker-only", lambda g: _share(g.marker_only)),
        ("first token p50 / p95 s", lambda g: f"{_seconds(g.ttft_p50_s)} / {_seconds(g.ttft_p95_s)}"),
        ("total p50 / p95 s", lambda g: f"{_seconds(g.total_p50_s)} / {_seconds(g.total_p95_s)}"),
    )
    table = Table(show_header=True, header_style="bold")
    table.add_column("")
    for g in report.groups:
        table.add_column(plain(g.group), justify="right")
    for label, cell in rows:
        table.add_row(Text(label), *(Text(cell(g)) for g in report.groups))
    return table
