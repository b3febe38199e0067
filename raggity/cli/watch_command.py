"""`rag watch`: keep the index current while files change, one summary line per update."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from raggity.cli.shared import ConfigOption, err, out
from raggity.cli.shared import session as _session
from raggity.cli.visible import visible

if TYPE_CHECKING:
    from raggity.api.watch import WatchUpdate


def watch_command(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Files or folders to watch (default: [ingest] paths).")
    ] = None,
    config: ConfigOption = None,
    debounce: Annotated[
        int,
        typer.Option(
            "--debounce",
            help="Milliseconds without a change before an update starts, so a burst of saves is one ingest.",
            min=50,
        ),
    ] = 400,
) -> None:
    """Watch folders and update the index after each burst of changes, until Ctrl-C."""
    from raggity.api.watch import WatchSettings, watch_index  # noqa: PLC0415 - deferred so `rag --help` stays instant

    session = _session(config)
    stop = threading.Event()

    def on_sigint(signum: int, frame: Any) -> None:
        # The first Ctrl-C lets a running ingest finish and commit; a second one interrupts it,
        # which the ingest's crash safety covers (the index keeps what was committed).
        stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        err.print("stopping after the current update (Ctrl-C again to interrupt it)")

    def on_ready(roots: tuple[Path, ...]) -> None:
        watched = ", ".join(str(r) for r in roots)
        out.print(Text(visible(f"watching {watched} (Ctrl-C to stop)")))

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        watch_index(
            session,
            paths or [],
            stop=stop,
            on_update=UpdatePrinter(),
            settings=WatchSettings(quiet_ms=debounce, max_wait_ms=max(10 * debounce, 5_000)),
            on_ready=on_ready,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    out.print("stopped; every update so far is committed")


class UpdatePrinter:
    """Prints each update's summary line, and a skipped file's line only when it was not skipped for
    that reason by the update before: every update skips them all again, and printed the same lines
    at every save."""

    def __init__(self) -> None:
        self._shown: set[tuple[str, str]] = set()

    def __call__(self, update: WatchUpdate) -> None:
        print_update(update, self._shown)


def print_update(update: WatchUpdate, shown: set[tuple[str, str]] | None = None) -> None:
    stamp = time.strftime("%H:%M:%S")
    if update.error is not None:
        line = Text(visible(f"{stamp} update failed: {update.error.message}"), style="red")
        if update.error.hint:
            line.append(visible(f" (fix: {update.error.hint})"), style="")
        err.print(line)
        return
    report = update.report
    if report is None or not update.changed_anything:
        return
    cause = "start" if update.events == 0 else f"{update.events} change{'s' * (update.events != 1)}"
    out.print(
        f"{stamp} {cause}: {report.added} added, {report.changed} changed, {report.removed} removed, "
        f"{len(report.skipped)} skipped; {report.chunks_written} chunks embedded in {report.seconds:.1f}s"
        + (" (full rebuild: settings changed)" if report.rebuilt else ""),
        markup=False,
    )
    for skipped in report.skipped:
        key = (skipped.source, skipped.reason)
        if shown is not None:
            if key in shown:
                continue
            shown.add(key)
        err.print(Text(visible(f"  skipped {skipped.source}: {skipped.reason}"), style="yellow"))
    if shown is not None:
        # A file fixed, then broken again, is said again.
        shown.intersection_update((s.source, s.reason) for s in report.skipped)
