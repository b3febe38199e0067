"""`rag models`: where each model role resolves, `add` and `list` for models of your own, and `pull`
for users who are online."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer
from rich.table import Table

from raggity.cli.shared import ConfigOption, JsonOption, err, load, out

models_app = typer.Typer(
    help="List the models raggity uses, add your own, or download another one.", no_args_is_help=False
)


@models_app.callback(invoke_without_command=True)
def list_models(ctx: typer.Context, config: ConfigOption = None, json_out: JsonOption = False) -> None:
    """List each role (embedder, reranker, generator): model, location, size, SHA-256, presence."""
    if ctx.invoked_subcommand is not None:
        return
    from raggity.api.status import model_statuses  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain, print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

    rows = model_statuses(load(config))
    if json_out:
        print_json(out, [asdict(r) for r in rows])
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("role", "model", "present", "size", "sha256", "path / note"):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(
            r.role,
            plain(r.name),
            "yes" if r.present else "no",
            f"{r.size / 1e6:.1f} MB" if r.size else "",
            r.sha256[:16],
            plain(r.path or r.note),
        )
    out.print(table)


@models_app.command("pull")
def pull(
    name_or_url: Annotated[
        str,
        typer.Argument(
            help="A hub repo id (Xenova/ms-marco-MiniLM-L-6-v2), a known short "
            "name (ms-marco-MiniLM-L-6-v2), or a URL of a .gguf file."
        ),
    ],
    name: Annotated[str | None, typer.Option("--name", help="Folder name under the models folder.")] = None,
) -> None:
    """Download a model (resumable, checksum-verified, atomic). Needs network access; everything else does not."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn  # noqa: PLC0415 - deferred so `rag --help` stays instant

    from raggity.api.model_store import pull_model  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain  # noqa: PLC0415 - deferred so `rag --help` stays instant

    with Progress(
        "[bold]pull", BarColumn(), DownloadColumn(), TransferSpeedColumn(), console=err
    ) as progress:
        task = progress.add_task("pull", total=None)
        pulled = pull_model(
            name_or_url,
            name=name,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
    out.print(plain(f"saved to {pulled.path}"))
    out.print(
        plain(
            f'use it with: [retrieval] rerank_model = "{pulled.name}"  '
            f'(or [generation] model = "{pulled.name}" for a GGUF)'
        )
    )


@models_app.command("add")
def add(
    path: Annotated[str, typer.Argument(help="A .gguf file of your own.")],
    name: Annotated[
        str | None,
        typer.Option("--name", help="The name [generation] model takes (default: the file's name)."),
    ] = None,
    copy: Annotated[
        bool, typer.Option("--copy", help="Copy the file into the models folder instead of linking to it.")
    ] = False,
) -> None:
    """Add a GGUF of your own under a name.

    The file is hashed once and checked against that hash on every load, as a pulled model is."""
    from pathlib import Path  # noqa: PLC0415 - deferred so `rag --help` stays instant

    from raggity.api.model_store import add_model  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain  # noqa: PLC0415 - deferred so `rag --help` stays instant

    with err.status("hashing the model (once)"):
        added = add_model(Path(path), name=name, copy=copy)
    out.print(
        plain(f"added {added.name}: {added.gguf} ({added.size / 1e6:.1f} MB, sha256 {added.sha256[:16]})")
    )
    out.print(plain(f'use it with: [generation] model = "{added.name}"  (or rag ask --model {added.name})'))
    out.print(plain(f"uncalibrated until you run: rag calibrate --model {added.name}"))


@models_app.command("list")
def list_all(config: ConfigOption = None, json_out: JsonOption = False) -> None:
    """List every generator model you can name, Ollama's included.

    Packaged, pulled or added models, and those in Ollama's store ($OLLAMA_MODELS, else
    ~/.ollama/models), with the one configured marked and each one's calibration."""
    from raggity.api.model_store import list_generators  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain, print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

    rows = list_generators(load(config))
    if json_out:
        print_json(out, [asdict(r) for r in rows])
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("", "model", "from", "present", "size", "sha256", "calibration", "path / note"):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(
            "*" if r.selected else "",
            plain(r.name),
            r.source,
            "yes" if r.present else "no",
            f"{r.size / 1e6:.1f} MB" if r.size else "",
            r.sha256[:16],
            plain(r.calibration),
            plain(r.path or r.note),
        )
    out.print(table)
