"""Typer commands. Each parses its options, calls the API, and renders; heavy imports stay inside."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from raggity.cli.cache_command import cache_app
from raggity.cli.errors import GuardedGroup
from raggity.cli.eval_command import eval_command
from raggity.cli.graph_command import graph_app, graph_build
from raggity.cli.models_command import models_app
from raggity.cli.shared import ConfigOption, JsonOption, err, load, out, set_global_config
from raggity.cli.shared import session as _session

app = typer.Typer(
    cls=GuardedGroup,
    help="Ask questions about your own documents, answered locally with citations. No network, no API key.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Help text names config sections like [ingest]; rich markup would swallow them as tags.
    rich_markup_mode=None,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def main(
    ctx: typer.Context,
    config: ConfigOption = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks (for bug reports).")] = False,
) -> None:
    ctx.obj = {"debug": debug}
    set_global_config(config)


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="Where to write the file.")] = Path("raggity.toml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a starter raggity.toml listing every key with its default and a comment."""
    from raggity.api.setup import write_starter_config

    written = write_starter_config(path, force=force)
    out.print(f"wrote {written}; the index will live in {written.parent / '.raggity'}")


@app.command()
def ingest(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Files or folders (default: [ingest] paths).")
    ] = None,
    config: ConfigOption = None,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Drop the index and index everything again.")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit non-zero (6) when any file was skipped.")
    ] = False,
    wait: Annotated[
        float, typer.Option("--wait", help="Seconds to wait for another running ingest.", min=0)
    ] = 0.0,
    json_out: JsonOption = False,
) -> None:
    """Index files: new and changed files are (re)chunked and embedded, deleted ones removed."""
    from raggity.cli.progress import RichGraphProgress, RichIngestProgress

    session = _session(config)
    console = err if json_out else out
    with RichIngestProgress(console) as progress, RichGraphProgress(console) as graph_progress:
        report = session.ingest(
            paths or [],
            rebuild=rebuild,
            strict=strict,
            wait_seconds=wait,
            progress=progress,
            graph_progress=graph_progress,
        )
    if json_out:
        from dataclasses import asdict

        from raggity.cli.render import print_json

        print_json(out, {**asdict(report), "index": str(session.layout.root)})
        return
    rate = report.chunks_written / report.embed_seconds if report.embed_seconds else 0.0
    out.print(
        f"[bold]done[/bold] in {report.seconds:.1f}s: {report.added} added, {report.changed} changed, "
        f"{report.removed} removed, {report.unchanged} unchanged, {len(report.skipped)} skipped; "
        f"{report.chunks_written} chunks embedded ({rate:.1f}/s)"
        + (" [yellow](full rebuild: settings changed)[/yellow]" if report.rebuilt else "")
    )
    out.print(f"index: {session.layout.root}")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[
        int | None, typer.Option("--k", "-k", help="How many results (default: [retrieval] top_k).", min=1)
    ] = None,
    config: ConfigOption = None,
    json_out: JsonOption = False,
    trace: Annotated[
        bool, typer.Option("--trace", help="Show each retrieval stage's timing and counts.")
    ] = False,
) -> None:
    """Retrieve the best-matching chunks (hybrid dense + BM25, fused by RRF). No language model is loaded."""
    from raggity.cli.render import candidate_json, print_json, search_table, trace_json, trace_table

    result = _session(config).search(query, k=k)
    if json_out:
        data: Any = [candidate_json(c) for c in result.candidates]
        print_json(out, {"results": data, "trace": trace_json(result.trace)} if trace else data)
        return
    if not result.candidates:
        out.print("no results")
    else:
        out.print(search_table(result.candidates))
    if trace:
        out.print(trace_table(result.trace))


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="Your question, in quotes.")],
    config: ConfigOption = None,
    json_out: JsonOption = False,
    trace: Annotated[
        bool, typer.Option("--trace", help="Show what each pipeline stage did and its time.")
    ] = False,
    no_stream: Annotated[
        bool, typer.Option("--no-stream", help="Print the answer only when it is complete.")
    ] = False,
    hyde: Annotated[
        bool | None,
        typer.Option(
            "--hyde/--no-hyde",
            help="Also search with an LLM-written hypothetical answer (default: [retrieval] hyde).",
            show_default=False,
        ),
    ] = None,
    step_back: Annotated[
        bool | None,
        typer.Option(
            "--step-back/--no-step-back",
            help="Also search with a broader LLM-written question (default: [retrieval] step_back).",
            show_default=False,
        ),
    ] = None,
    expand: Annotated[
        bool | None,
        typer.Option(
            "--expand/--no-expand",
            help="Also search with [retrieval] expand_n LLM-written rephrasings (default: [retrieval] expand).",
            show_default=False,
        ),
    ] = None,
    decompose: Annotated[
        bool,
        typer.Option("--decompose", help="Split into sub-questions, retrieve each, answer over all."),
    ] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the answer cache.")
    ] = False,
) -> None:
    """Answer a question from the indexed documents, with numbered citations, or say it cannot."""
    from raggity.cli.render import answer_json, print_json, print_sources, trace_table

    session = _session(config)
    streaming = not (json_out or no_stream)
    started = time.perf_counter()
    first: list[float] = []

    def on_token(piece: str) -> None:
        if not first:
            first.append(time.perf_counter() - started)
        if streaming:
            sys.stdout.write(piece)
            sys.stdout.flush()

    answer = session.ask(
        question,
        on_token=on_token,
        hyde=hyde,
        step_back=step_back,
        expand=expand,
        decompose=decompose,
        use_cache=False if no_cache else None,
    )
    if json_out:
        print_json(out, answer_json(answer))
        return
    if answer.abstained or answer.refused or not streaming:  # a cache hit streams its whole text at once
        out.print(answer.text)
    else:
        sys.stdout.write("\n")
    print_sources(out, answer)
    if trace:
        out.print(trace_table(answer.trace))


@app.command()
def status(config: ConfigOption = None, json_out: JsonOption = False) -> None:
    """Show what is indexed: files, chunks, models, disk size and the last ingest."""
    from raggity.api.status import index_status, model_statuses
    from raggity.cli.render import print_json

    cfg = load(config)
    st = index_status(cfg)
    models = model_statuses(cfg)
    if json_out:
        from dataclasses import asdict

        print_json(out, {**asdict(st), "models": [asdict(m) for m in models]})
        return
    last = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.last_ingest)) if st.last_ingest else "never"
    out.print(f"config:      {st.config_file or 'none (defaults)'}")
    out.print(
        f"index:       {st.index_dir}"
        + ("" if st.exists else "  [yellow](not created yet: run rag ingest PATH)[/yellow]")
    )
    out.print(
        f"files:       {st.files}\nchunks:      {st.chunks}\ndisk:        {st.disk_bytes / 1e6:.1f} MB\nlast ingest: {last}"
    )
    for m in models:
        state = "[green]ok[/green]" if m.present else "[yellow]missing[/yellow]"
        out.print(f"{m.role + ':':<20} {m.name} {state} {escape(m.path)} {escape(m.note)}".rstrip())


@app.command()
def doctor(config: ConfigOption = None) -> None:
    """Check the config, models (with hashes) and index health, and say how to fix each problem."""
    from raggity.api.doctor import run_checks

    checks = run_checks(load(config))
    failed = False
    for check in checks:
        if check.ok:
            mark = (
                "[green]ok[/green]  "
                if check.severity == "error" or not check.fix
                else "[yellow]warn[/yellow]"
            )
        else:
            mark = "[red]FAIL[/red]" if check.severity == "error" else "[yellow]warn[/yellow]"
            failed = failed or check.severity == "error"
        out.print(f"{mark} {check.name}: {escape(check.message)}")
        if check.fix:
            out.print(f"      fix: {escape(check.fix)}")
    if failed:
        raise typer.Exit(1)


app.command("eval")(eval_command)
app.add_typer(models_app, name="models")
app.command("graph-build")(graph_build)
app.add_typer(graph_app, name="graph")
app.add_typer(cache_app, name="cache")


def run() -> None:
    app()


if __name__ == "__main__":
    run()
