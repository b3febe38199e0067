"""docs/ must keep up with the code: every command, option and config key is documented."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from raggity.cli.main import app
from raggity.config.schema import SECTIONS

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def test_every_command_and_option_appears_in_the_cli_page() -> None:
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    missing = []
    for path, command in _commands(typer.main.get_command(app)):
        if path and f"rag {' '.join(path)}" not in page:
            missing.append(f"rag {' '.join(path)}")
        for param in command.params:
            missing += [
                f"{' '.join(path)} {flag}"
                for flag in (*param.opts, *param.secondary_opts)
                if flag.startswith("-") and flag not in page
            ]
    assert missing == []


def test_every_config_key_appears_in_the_configuration_page() -> None:
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    missing = [
        f"[{section}] {field.name}"
        for section, cls in SECTIONS.items()
        for field in dataclasses.fields(cls)
        if f"`{field.name}`" not in page
    ]
    assert missing == []
