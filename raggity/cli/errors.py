"""One error boundary for every command: a clear line and an exit code, a traceback only on --debug."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from raggity.api import RaggityError, storage_error
from raggity.cli.visible import visible

INTERNAL_ERROR = 70
INTERRUPTED = 130


class ArgumentError(RaggityError):
    """A command-line argument cannot be used, e.g. a question whose bytes are not UTF-8."""

    exit_code = 2


def debug_enabled(ctx: Any) -> bool:
    return (
        "--debug" in sys.argv
        or os.environ.get("RAGGITY_DEBUG", "") not in ("", "0")
        or bool((ctx.obj or {}).get("debug"))
    )


def report(exc: RaggityError) -> None:
    """The error line and its fix on stderr. Messages quote paths and values from files: shown as
    data, on one line each."""
    typer.secho(f"error: {visible(exc.message)}", fg="red", err=True)
    if exc.hint:
        typer.echo(f"  fix: {visible(exc.hint)}", err=True)


class GuardedGroup(TyperGroup):
    # The context type is typer's vendored click Context, which is private; Any keeps the override sound.
    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except RaggityError as exc:
            if debug_enabled(ctx):
                raise
            report(exc)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            typer.echo("interrupted; the index keeps everything committed so far", err=True)
            raise typer.Exit(INTERRUPTED) from None
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except Exception as exc:
            # Usage errors of the vendored click pass through untouched, so typer prints them itself.
            if debug_enabled(ctx) or type(exc).__module__.startswith("typer."):
                raise
            # A full disk or read-only folder outside the index writers (which say which index) is
            # still the user's to fix, not an internal error.
            refused = storage_error(exc, Path(getattr(exc, "filename", None) or Path.cwd()))
            if refused is not None:
                typer.secho(f"error: {visible(refused.message)}", fg="red", err=True)
                typer.echo(
                    "  fix: free some space or choose a writable location, then run it again", err=True
                )
                raise typer.Exit(refused.exit_code) from None
            typer.secho(f"internal error: {exc.__class__.__name__}: {visible(str(exc))}", fg="red", err=True)
            typer.echo("  fix: rerun with --debug and report the traceback", err=True)
            raise typer.Exit(INTERNAL_ERROR) from None
