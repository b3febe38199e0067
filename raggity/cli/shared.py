"""Options, consoles and loaders shared by the command modules."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from raggity.cli.errors import ArgumentError
from raggity.cli.visible import visible

if TYPE_CHECKING:
    from raggity.api import Config
    from raggity.api.session import Raggity

out = Console(highlight=False, soft_wrap=True)
# soft_wrap: a warning stays one line when stderr is not a terminal (80 columns), so it greps whole.
err = Console(stderr=True, highlight=False, soft_wrap=True)

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="raggity.toml to use (default: $RAGGITY_CONFIG, then the nearest raggity.toml here or in a "
        "parent, which needs `rag trust` before it may reach outside its folder).",
        dir_okay=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of text.")]


def utf8_text(ctx: Any, param: Any, value: str) -> str:
    """Argument callback: text that reached argv as undecodable bytes is refused in one line.

    Python keeps such bytes as lone surrogates, which the tokenizer and the search index reject
    deep inside with a TypeError; a question in another encoding is a mistake to report, not guess.
    """
    error = not_utf8(value, f"the {param.name}")
    if error is not None:
        raise error
    return value


def not_utf8(value: str, what: str) -> ArgumentError | None:
    """The one-line error for text that arrived as undecodable bytes (kept as lone surrogates, by
    argv or by a stdin read with errors="surrogateescape"), or None for valid text. Every door that
    reads text from the user says it the same way: `rag ask`'s question, a line of `rag chat`."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return ArgumentError(
            f"{what} is not valid UTF-8 text: "
            f"undecodable byte {visible(value[exc.start])} at character {exc.start + 1}",
            "type it in a UTF-8 terminal (e.g. LANG=C.UTF-8) or convert it with iconv",
        )
    return None


# `rag --config X ingest` and `rag ingest --config X` both work; the command's own option wins.
_global_config: list[Path | None] = [None]


def set_global_config(config: Path | None) -> None:
    _global_config[0] = config


def load(config: Path | None) -> Config:
    from raggity.api import load_config  # noqa: PLC0415 - deferred so `rag --help` stays instant

    return load_config(config or _global_config[0])


def warn(message: str) -> None:
    """A warning on stderr; the message may quote paths or document text, so it is shown as data."""
    err.print(Text.assemble(("warning:", "yellow"), " ", visible(message)))


def session(config: Path | None, *, model: str | None = None, one_question: str | None = None) -> Raggity:
    """The session for a command; `model` names a generation model to use instead of the config's;
    `one_question`, the only question this process answers, lets its models use less memory (see
    models_for_one_question)."""
    from raggity.api.session import Models, Raggity, models_for_one_question, with_generation_model  # noqa: PLC0415 - deferred so `rag --help` stays instant

    cfg = load(config)
    if model:
        cfg = with_generation_model(cfg, model)
    if one_question is None:
        return Raggity(cfg, models=Models(cfg, warn=warn), warn=warn)
    return Raggity(cfg, models=models_for_one_question(cfg, one_question, warn), warn=warn)
