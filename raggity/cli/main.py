"""Typer commands. Each parses its options, calls the API, and renders; heavy imports stay inside."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from raggity.cli.cache_command import cache_app
from raggity.cli.calibrate_command import calibrate_command
from raggity.cli.chat_command import chat_command
from raggity.cli.errors import ArgumentError, GuardedGroup
from raggity.cli.eval_command import eval_command
from raggity.cli.graph_command import graph_app, graph_build
from raggity.cli.mcp_command import mcp_command
from raggity.cli.models_command import models_app
from raggity.cli.shared import ConfigOption, JsonOption, err, load, out, set_global_config, utf8_text
from raggity.cli.shared import session as _session
from raggity.cli.show_command import show_command
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


# The commands that may load the generator (`rag search` never does; `rag doctor` loads it in a child).
GENERATING_COMMANDS = frozenset({"ask", "chat", "mcp", "eval", "calibrate", "graph-build"})


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
    if ctx.invoked_subcommand in GENERATING_COMMANDS:
        from raggity.api.generation_process import prepare_to_generate  # noqa: PLC0415 - only commands that generate load it

        prepare_to_generate()  # llama.cpp's library before numpy's: a CUDA build needs that order


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
        bool,
        typer.Option(
            "--strict",
            help="Exit non-zero (6) when any file was skipped (not for files left out by the default rules).",
        ),
    ] = False,
    wait: Annotated[
        float, typer.Option("--wait", help="Seconds to wait for another running ingest.", min=0)
    ] = 0.0,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="List every skipped or left-out file, not only a count per reason."
        ),
    ] = False,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            help="local: read, chunk and embed in this process; ray: as Ray Data stages on a Ray cluster, "
            "for an index at an s3:// URI (needs pip install 'raggity[scale]'). Default: [ingest] engine.",
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="Ray cluster for --engine ray (auto, ray://HOST:10001, HOST:PORT). Default: [ingest] "
            "ray_address, then $RAY_ADDRESS, else a Ray started on this machine for the ingest.",
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Index files: new and changed files are (re)chunked and embedded, deleted ones removed.

    Hidden files and folders, files named like keys or passwords (credentials.json, *.pem...),
    generated, minified and vendored files (lock files, *.min.js, vendor/, Sphinx _static/...), a
    page's source when its HTML is read (git-stash.txt next to git-stash.html, Sphinx's
    _sources/intro.rst.txt) and raggity's own index are left out; [ingest] include_hidden and
    include_generated bring back all but the credentials and the index, and a file named as PATH is
    always read. The summary gives one line per reason.
    """
    from rich.text import Text  # noqa: PLC0415 - deferred so `rag --help` stays instant

    from raggity.cli.progress import RichGraphProgress, RichIngestProgress  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain  # noqa: PLC0415 - deferred so `rag --help` stays instant

    if engine not in (None, "local", "ray"):
        from raggity.cli.visible import visible  # noqa: PLC0415 - deferred so `rag --help` stays instant

        raise ArgumentError(
            f"--engine must be local or ray, got {visible(engine)}", "rag ingest --engine ray"
        )
    session = _session(config)
    console = err if json_out else out
    from raggity.api import IngestIncompleteError  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.skip_summary import skip_summary  # noqa: PLC0415 - deferred so `rag --help` stays instant

    with RichIngestProgress(console) as progress, RichGraphProgress(console) as graph_progress:
        try:
            report = session.ingest(
                paths or [],
                rebuild=rebuild,
                strict=strict,
                wait_seconds=wait,
                progress=progress,
                graph_progress=graph_progress,
                engine=engine,
                ray_address=ray_address,
            )
        except IngestIncompleteError:
            # --strict failed: say what was skipped before the error line.
            for line in skip_summary(progress.skipped, (), verbose=verbose):
                console.print(line, highlight=False)
            raise
    if json_out:
        from dataclasses import asdict  # noqa: PLC0415 - deferred so `rag --help` stays instant

        from raggity.cli.render import print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

        print_json(out, {**asdict(report), "index": session.config.index_location.uri})
        return
    for line in skip_summary(report.skipped, report.excluded, verbose=verbose):
        out.print(line, highlight=False)
    rate = report.chunks_written / report.embed_seconds if report.embed_seconds else 0.0
    left_out = f", {len(report.excluded)} left out" if report.excluded else ""
    out.print(
        Text.assemble(
            ("done", "bold"),
            f" in {report.seconds:.1f}s: {report.added} added, {report.changed} changed, "
            f"{report.removed} removed, {report.unchanged} unchanged, {len(report.skipped)} skipped{left_out}; "
            f"{report.chunks_written} chunks embedded ({rate:.1f}/s)",
            (_rebuild_note(report.rebuilt, asked=rebuild), "yellow"),
        )
    )
    out.print(plain(f"index: {session.config.index_location.uri}"))


def _rebuild_note(rebuilt: bool, *, asked: bool) -> str:
    """Why the index was rebuilt: --rebuild asked for it, or the settings it was built with changed."""
    if not rebuilt:
        return ""
    return " (full rebuild: --rebuild)" if asked else " (full rebuild: settings changed)"


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


@app.command()
def status(config: ConfigOption = None, json_out: JsonOption = False) -> None:
    """Show what is indexed: files, chunks, models, disk size and the last ingest."""
    from rich.text import Text  # noqa: PLC0415 - deferred so `rag --help` stays instant

    from raggity.api.status import device_placements, index_status, model_statuses  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.api.thresholds import answer_thresholds  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain, print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

    cfg = load(config)
    st = index_status(cfg)
    models = model_statuses(cfg)
    devices = device_placements(cfg)
    if json_out:
        from dataclasses import asdict  # noqa: PLC0415 - deferred so `rag --help` stays instant

        print_json(
            out,
            {
                **asdict(st),
                "models": [asdict(m) for m in models],
                "devices": [asdict(d) for d in devices],
                "answer_thresholds": answer_thresholds(cfg).summary,
            },
        )
        return
    last = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.last_ingest)) if st.last_ingest else "never"
    out.print(plain(f"config:      {st.config_file or 'none (defaults)'}"))
    out.print(
        Text.assemble(
            plain(f"index:       {st.index_dir}"),
            ("" if st.exists else "  (not created yet: run rag ingest PATH)", "yellow"),
        )
    )
    # An index on object storage: its committed Lance version instead of a size on disk.
    size = f"{st.disk_bytes / 1e6:.1f} MB" if st.disk_bytes >= 0 else "object storage"
    if st.version is not None:
        size += f", version {st.version}"
    out.print(f"files:       {st.files}\nchunks:      {st.chunks}\ndisk:        {size}\nlast ingest: {last}")
    if st.ocr_pages:
        out.print(f"ocr pages:   {st.ocr_pages} (text read by OCR from scans and images)")
    if st.notice:
        out.print(Text.assemble(("note:", "yellow"), plain(f"        {st.notice}")))
    for m in models:
        state = ("ok", "green") if m.present else ("missing", "yellow")
        line = Text.assemble(plain(f"{m.role + ':':<20} {m.name} "), state, plain(f" {m.path} {m.note}"))
        line.rstrip()
        out.print(line)
    for d in devices:
        out.print(plain(f"{d.role + ' device:':<20} {d.device}: {d.why}"))
    out.print(plain(f"{'answer thresholds:':<20} {answer_thresholds(cfg).summary}"))


@app.command()
def doctor(config: ConfigOption = None, json_out: JsonOption = False) -> None:
    """Check the config, models (with hashes) and index health, and say how to fix each problem.

    Exits 1 when any check at error severity fails (warnings do not fail)."""
    from raggity.api.doctor import run_checks  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain  # noqa: PLC0415 - deferred so `rag --help` stays instant

    checks = run_checks(load(config))
    if json_out:
        from dataclasses import asdict  # noqa: PLC0415 - deferred so `rag --help` stays instant

        from raggity.cli.render import print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

        print_json(out, [asdict(c) for c in checks])
        if any(not c.ok and c.severity == "error" for c in checks):
            raise typer.Exit(1)
        return
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
        out.print(mark, plain(f"{check.name}: {check.message}"))
        if check.fix:
            out.print(plain(f"      fix: {check.fix}"))
    if failed:
        raise typer.Exit(1)


app.command("show")(show_command)
app.command("eval")(eval_command)
app.add_typer(models_app, name="models")
app.command("graph-build")(graph_build)
app.add_typer(graph_app, name="graph")
app.add_typer(cache_app, name="cache")
app.command("chat")(chat_command)
app.command("mcp")(mcp_command)
app.command("watch")(watch_command)
app.command("trust")(trust)
app.command("calibrate")(calibrate_command)


def run() -> None:
    app()


if __name__ == "__main__":
    run()
