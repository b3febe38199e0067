"""Options, consoles and loaders shared by the command modules."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

if TYPE_CHECKING:
    from raggity.api.session import Raggity
    from raggity.config.schema import Config

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False)

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="raggity.toml to use (default: $RAGGITY_CONFIG, then the nearest raggity.toml here or in a parent).",
        dir_okay=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of text.")]


def load(config: Path | None) -> Config:
    from raggity.config.loader import load_config

    return load_config(config)


def session(config: Path | None) -> Raggity:
    from raggity.api.session import Raggity

    return Raggity(load(config), warn=lambda message: err.print(f"[yellow]warning:[/yellow] {message}"))
