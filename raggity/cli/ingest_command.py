"""`rag ingest [PATH...]`: index files, then say what was added, changed, removed and skipped."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from raggity.cli.errors import ArgumentError
from raggity.cli.shared import ConfigOption, JsonOption, err, out
from raggity.cli.shared import session as _session


def ingest_command(
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
