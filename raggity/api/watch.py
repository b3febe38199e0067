"""Keep an index current: watch its folders and run the incremental ingest after each burst of changes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from watchfiles import Change, DefaultFilter, watch
from watchfiles._rust_notify import WatchfilesRustInternalError

from raggity.api.session import Raggity
from raggity.core.errors import RaggityError
from raggity.ingest.discover import valid_name
from raggity.pipeline.ingest.sync import IngestProgress, IngestReport

# Another ingest (a `rag ingest` in a second terminal) holds the lock: wait for it rather than fail.
BUSY_WAIT_SECONDS = 60.0
# How often, and after what pause, the native watcher is started again when a name that is not
# UTF-8 stopped it before it yielded anything.
RESTARTS = 5
RESTART_PAUSE_SECONDS = 0.5


@dataclass(frozen=True)
class WatchSettings:
    """`quiet_ms`: an update starts once no file has changed for this long, so a burst of saves is
    one ingest. `max_wait_ms`: a stream of changes that never goes quiet still updates this often."""

    quiet_ms: int = 400
    max_wait_ms: int = 5_000


@dataclass(frozen=True)
class WatchUpdate:
    """One ingest the watcher ran: at start (`events` == 0) or after a burst of `events` file events.
    Exactly one of `report` and `error` is set; an error does not stop the watcher."""

    events: int
    report: IngestReport | None = None
    error: RaggityError | None = None

    @property
    def changed_anything(self) -> bool:
        r = self.report
        return r is None or bool(r.added or r.changed or r.removed or r.skipped or r.repaired or r.rebuilt)


class OutsideIndexFilter(DefaultFilter):
    """watchfiles' default filter (.git, editor swap files, ...) plus the index folder itself, whose
    own writes during an ingest would otherwise wake the watcher again and again."""

    def __init__(self, index_root: Path) -> None:
        super().__init__()
        self._index = str(index_root.resolve())

    def __call__(self, change: Change, path: str) -> bool:
        if path == self._index or path.startswith(self._index + "/"):
            return False
        return super().__call__(change, path)


def watch_index(
    session: Raggity,
    paths: Sequence[Path] = (),
    *,
    stop: threading.Event,
    on_update: Callable[[WatchUpdate], None],
    settings: WatchSettings = WatchSettings(),
    on_ready: Callable[[tuple[Path, ...]], None] = lambda roots: None,
    progress: IngestProgress | None = None,
) -> None:
    """Ingests once, then again after every burst of changes under `paths` (default: [ingest] paths),
    until `stop` is set.

    `on_ready` is called once the first ingest is done and changes are being watched.
    Stopping never interrupts an ingest: `stop` is checked between updates, so one that is running
    finishes and commits first; the watcher then returns. Ignore files and unsupported files are left
    to the ingest's own discovery, so an event for an ignored file costs an ingest that changes
    nothing (reported with `changed_anything` False). A file that vanishes mid-ingest is reported in
    the ingest's `skipped`.
    """
    roots = session.ingest_roots(paths)
    missing = [r for r in roots if not r.exists()]
    if missing:
        raise RaggityError(f"{missing[0]}: no such file or folder to watch", "pass an existing folder")
    for root in roots:
        if not valid_name(str(root)):
            raise RaggityError(
                f"{root}: the name is not valid UTF-8, which the watcher cannot follow",
                "rename it, or run `rag ingest` after changes instead",
            )
    started = resumed = False
    failures = 0
    while not stop.is_set():
        try:
            for changes in watch(
                *roots,
                watch_filter=OutsideIndexFilter(session.layout.root),
                debounce=settings.max_wait_ms,
                step=settings.quiet_ms,
                stop_event=stop,
                # How often the native watcher looks at `stop` while nothing changes; it also yields
                # an empty set then, which is how the first ingest runs only once the watcher is live
                # (a file saved during that ingest is then never missed).
                rust_timeout=500,
                yield_on_timeout=True,
                raise_interrupt=False,
            ):
                failures = 0
                if stop.is_set():
                    return
                if not started:
                    started = True
                    on_update(_ingest(session, roots, 0, progress))
                    on_ready(roots)
                elif changes or resumed:
                    on_update(_ingest(session, roots, max(len(changes), 1), progress))
                resumed = False
        except WatchfilesRustInternalError as exc:
            # The native watcher stops at a name that is not UTF-8: it cannot make a str of it. It
            # starts again after a pause (a burst of such files is over by then) and an ingest
            # follows, whose discovery finds the change and skips the file with its reason. A
            # watcher that fails again and again before it is live cannot watch this tree at all
            # (a folder with such a name inside it): that is an error, said in one line.
            failures += 1
            if failures > RESTARTS:
                raise RaggityError(
                    f"the watcher cannot follow a name that is not valid UTF-8 under the watched folders ({exc})",
                    "rename it, or run `rag ingest` after changes instead",
                ) from None
            resumed = True
            stop.wait(RESTART_PAUSE_SECONDS)


def _ingest(
    session: Raggity, roots: tuple[Path, ...], events: int, progress: IngestProgress | None
) -> WatchUpdate:
    try:
        report = session.ingest(roots, wait_seconds=BUSY_WAIT_SECONDS, progress=progress)
    except RaggityError as exc:
        return WatchUpdate(events, error=exc)
    return WatchUpdate(events, report=report)
