"""Typer commands. Each parses its options, calls the API, and renders; heavy imports stay inside."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from raggity.cli.cache_command import cache_app
from raggity.cli.calibrate_command import calibrate_command
from raggity.cli.chat_command import chat_command
from raggity.cli.compact_command import compact_command
from raggity.cli.doctor_command import doctor_command
from raggity.cli.errors import GuardedGroup
from raggity.cli.eval_command import eval_command
from raggity.cli.graph_command import graph_app, graph_build
from raggity.cli.ingest_command import ingest_command
from raggity.cli.mcp_command import mcp_command
from raggity.cli.models_command import models_app
from raggity.cli.shared import ConfigOption, JsonOption, err, out, set_global_config, utf8_text
from raggity.cli.shared import session as _session
from raggity.cli.short_process import end, exit_without_finalizing, pause_collector, resume_collector
from raggity.cli.show_command import show_command
from raggity.cli.status_command import status_command
from raggity.cli.trust_command import trust
from raggity.cli.watch_command import watch_command

app = typer.Typer(
    cls=GuardedGroup,
    help="Ask questions about your own documents, answered locally with citations. No network, no API key.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Help text names config sections like [ingest]; rich markup would swallow them as tags.
    rich_markup_mode=None,
    # `rag --install-completion` / `--show-completion` for bash, zsh, fish and PowerShell.
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version  # noqa: PLC0415 - deferred so `rag --help` stays instant

        out.print(f"raggity {version('raggity')}")
        raise typer.Exit


PathOption = Annotated[
    str | None,
    typer.Option(
        "--path",
        help="Only files whose path matches this glob, e.g. '*.md' or 'docs/*' (matched against the end of the path).",
    ),
]


@app.callback()
def main(
    ctx: typer.Context,
    config: ConfigOption = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks (for bug reports).")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print raggity's version and exit.", is_eager=True, callback=_print_version
        ),
    ] = False,
) -> None:
    ctx.obj = {"debug": debug}
    set_global_config(config)
    if ctx.invoked_subcommand == "search":
        exit_without_finalizing()  # a short process (cli/short_process.py)
    else:
        resume_collector()  # only a search runs without it (cli/short_process.py)


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="Where to write the file.")] = Path("raggity.toml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a starter raggity.toml listing every key with its default and a comment."""
    from raggity.api.setup import write_starter_config  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain  # noqa: PLC0415 - deferred so `rag --help` stays instant

    written = write_starter_config(path, force=force)
    out.print(plain(f"wrote {written}; the index will live in {written.parent / '.raggity'}"))


# In the order `rag --help` lists them.
app.command("ingest")(ingest_command)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.", callback=utf8_text)],
    k: Annotated[
        int | None,
        typer.Option("--top-k", "--k", "-k", help="How many results (default: [retrieval] top_k).", min=1),
    ] = None,
    path: PathOption = None,
    config: ConfigOption = None,
    json_out: JsonOption = False,
    trace: Annotated[
        bool, typer.Option("--trace", help="Show each retrieval stage's timing and counts.")
    ] = False,
) -> None:
    """Retrieve the best-matching chunks (hybrid dense + BM25, fused by RRF). No language model is loaded."""
    from raggity.cli.arrow_without_pandas import load_arrow_without_pandas  # noqa: PLC0415 - deferred so `rag --help` stays instant

    load_arrow_without_pandas()  # a cold search spends no time on pandas, which it never uses
    from raggity.api import candidate_json, trace_json  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import print_json, search_table, trace_table  # noqa: PLC0415 - deferred so `rag --help` stays instant

    result = _session(config).search(query, k=k, path_glob=path)
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
    question: Annotated[str, typer.Argument(help="Your question, in quotes.", callback=utf8_text)],
    top_k: Annotated[
        int | None,
        typer.Option(
            "--top-k", "-k", help="How many sources the model reads (default: [retrieval] top_k).", min=1
        ),
    ] = None,
    path: PathOption = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Generation model to use instead of [generation] model, "
            "e.g. qwen2.5-coder-0.5b-instruct (faster, less often right).",
        ),
    ] = None,
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
    from raggity.api import answer_json  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import finish_reply, print_footer, print_json, trace_table  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.status_line import StatusLine  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.visible import visible  # noqa: PLC0415 - deferred so `rag --help` stays instant

    session = _session(config, model=model, one_question=question)
    streaming = not (json_out or no_stream)

    streamed: list[str] = []
    with StatusLine(err, shown=not json_out) as status:

        def on_token(piece: str) -> None:
            status.stop()  # the answer's first text replaces the status line
            if streaming:
                streamed.append(piece)
                sys.stdout.write(visible(piece, keep_newlines=True))
                sys.stdout.flush()

        answer = session.ask(
            question,
            on_token=on_token,
            on_stage=status.stage,
            hyde=hyde,
            step_back=step_back,
            expand=expand,
            decompose=decompose,
            use_cache=False if no_cache else None,
            top_k=top_k,
            path_glob=path,
        )
    if json_out:
        print_json(out, answer_json(answer))
        return
    finish_reply(out, answer, streamed=bool(streamed))
    print_footer(out, answer)
    if trace:
        out.print(trace_table(answer.trace))


app.command("status")(status_command)
app.command("doctor")(doctor_command)
app.command("show")(show_command)
app.command("eval")(eval_command)
app.add_typer(models_app, name="models")
app.command("graph-build")(graph_build)
app.add_typer(graph_app, name="graph")
app.add_typer(cache_app, name="cache")
app.command("compact")(compact_command)
app.command("chat")(chat_command)
app.command("mcp")(mcp_command)
app.command("watch")(watch_command)
app.command("trust")(trust)
app.command("calibrate")(calibrate_command)


def run() -> None:
    pause_collector()  # resumed by `main` for every command but `rag search` (cli/short_process.py)
    try:
        app()
    except SystemExit as exc:
        end(exc)  # a search's process ends here; any other goes on to Python's exit
        raise
    finally:
        resume_collector()


if __name__ == "__main__":
    run()
