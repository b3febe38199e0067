"""docs/ must keep up with the code: every command, option and config key is documented."""

from __future__ import annotations

import dataclasses
import json
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


def _literal(value: Any) -> str:
    """A default as the page writes it: TOML (which is JSON's syntax for these strings and lists)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, str | list) else str(value)


def _range(field: dataclasses.Field[Any]) -> str:
    lo, hi = field.metadata.get("lo"), field.metadata.get("hi")

    def num(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else str(x)

    if lo is not None and hi is not None:
        return f"{num(lo)} to {num(hi)}"
    return f">= {num(lo)}" if lo is not None else "-"


def test_the_configuration_page_gives_each_keys_type_default_and_range() -> None:
    # It once gave the old default generator, after the code had changed it.
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    wrong = []
    for section, cls in SECTIONS.items():
        table = page.split(f"### [{section}]\n", 1)[1].split("\n#", 1)[0]
        rows = {
            cells[0].strip("`"): cells[1:4]
            for line in table.splitlines()
            if line.startswith("| `") and (cells := [c.strip() for c in line.strip("|").split(" | ")])
        }
        for field in dataclasses.fields(cls):
            default = field.default_factory() if callable(field.default_factory) else field.default
            expected = [str(field.type), f"`{_literal(default)}`", _range(field)]
            if rows.get(field.name) != expected:
                wrong.append(f"[{section}] {field.name}: page {rows.get(field.name)}, code {expected}")
    assert wrong == []
