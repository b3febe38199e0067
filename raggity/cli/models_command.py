"""`rag models`: where each model role resolves, and `rag models pull` for users who are online."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer
from rich.table import Table

from raggity.cli.shared import ConfigOption, JsonOption, err, load, out

models_app = typer.Typer(help="List the models raggity uses, or download another one.", no_args_is_help=False)


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

    from raggity.api.models import pull_model  # noqa: PLC0415 - deferred so `rag --help` stays instant
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
