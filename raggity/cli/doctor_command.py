"""`rag doctor`: check the config, models and index health, with a fix for each problem."""

from __future__ import annotations

import typer

from raggity.cli.shared import ConfigOption, JsonOption, load, out


def doctor_command(config: ConfigOption = None, json_out: JsonOption = False) -> None:
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
