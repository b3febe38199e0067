"""`rag calibrate`: fit the generator's answer thresholds on the shipped set, or on this index."""

from __future__ import annotations

from typing import Annotated

import typer

from raggity.cli.shared import ConfigOption, JsonOption, err, load, out


def calibrate_command(
    config: ConfigOption = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Generation model to calibrate (default: the configured one)."),
    ] = None,
    corpus: Annotated[
        bool,
        typer.Option(
            "--corpus",
            help="Fit the cosine floor, coverage floor and refusal ceiling on this index instead: questions "
            "the model writes from your own chunks, and unrelated questions from the shipped set. Stored "
            "with the index.",
        ),
    ] = False,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=1,
            help="Questions per group: a quicker, rougher fit (default: the whole shipped set, 300/300/200; "
            "with --corpus, 40 of each).",
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Fit the coverage floor and refusal ceiling the model declines with, and store them beside it.

    Asks the shipped calibration set (SQuAD 2.0, CC BY-SA 4.0: answerable, unanswerable and unrelated
    questions) through the real pipeline, reading the model's judgement without generating; the pair
    declines the most unanswerable and unrelated questions while declining at most 5% of the answerable
    ones. Resumable: run it again after an
    interruption; --limit N asks the first N questions of each group, a quicker and rougher fit."""
    from dataclasses import asdict  # noqa: PLC0415 - deferred so `rag --help` stays instant

    from raggity.api.calibrate import calibrate_model  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.api.calibrate_corpus import calibrate_corpus  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.calibration_bar import CalibrationBar  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain, print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

    cfg = load(config)
    with CalibrationBar(err, "calibrate") as bar:
        if corpus:
            run = calibrate_corpus(cfg, model=model, per_group=limit, progress=bar)
        else:
            run = calibrate_model(cfg, model=model, per_group=limit, progress=bar)
    c = run.calibration
    if json_out:
        print_json(out, {**asdict(c), "stored_at": str(run.stored_at), "new_questions": run.new_questions})
        return
    out.print(plain(f"{c.model}: {c.summary()}"))
    rates = ", ".join(f"{name} {rate:.1%} of {c.n.get(name, 0)}" for name, rate in c.declined.items())
    out.print(plain(f"declined: {rates}"))
    out.print(plain(f"stored at {run.stored_at}"))
