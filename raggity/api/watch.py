"""Keep an index current: watch its folders and run the incremental ingest after each burst of changes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from watchfiles import Change, DefaultFilter, watch
from watchfiles._rust_notify import WatchfilesRustInternalError

from raggity.api.session import Raggity
from raggity.core.errors import IndexBusyError, RaggityError
from raggity.documents.discover import valid_name
from raggity.pipeline.ingest.sync import IngestProgress, IngestReport

# Another ingest (a `rag ingest` in a second terminal) holds the lock: wait for it rather than fail.
BUSY_WAIT_SECONDS = 60.0
# An update the lock still refused after that wait is tried again after this long, then twice as
# long each time up to the maximum, until one runs: a change must not wait for the next change.
RETRY_FIRST_SECONDS = 5.0
RETRY_MAX_SECONDS = 300.0
# How often a watched folder that is gone is looked for again.
GONE_POLL_SECONDS = 0.5
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
    busy_wait_seconds: float = BUSY_WAIT_SECONDS
    retry_first_seconds: float = RETRY_FIRST_SECONDS
    retry_max_seconds: float = RETRY_MAX_SECONDS


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
    roots = session.indexer.roots(paths)
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
    retry = _Retry(settings)
    while not stop.is_set():
        if not _present(roots, stop, on_update):
            return
        watched = _identities(roots)
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
                if _identities(roots) != watched:
                    # A watched folder was renamed, deleted or replaced: the native watcher follows
                    # the old one (or nothing). Start again on what the path names now.
                    resumed = True
                    break
                if not started:
                    started = True
                    on_update(retry.after(_ingest(session, roots, 0, progress, settings)))
                    on_ready(roots)
                elif changes or resumed or retry.due():
                    on_update(retry.after(_ingest(session, roots, max(len(changes), 1), progress, settings)))
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
    session: Raggity,
    roots: tuple[Path, ...],
    events: int,
    progress: IngestProgress | None,
    settings: WatchSettings,
) -> WatchUpdate:
    try:
        report = session.ingest(roots, wait_seconds=settings.busy_wait_seconds, progress=progress)
    except RaggityError as exc:
        return WatchUpdate(events, error=exc)
    return WatchUpdate(events, report=report)


class _Retry:
    """When an update refused by a busy lock is tried again: after `retry_first_seconds`, then twice
    as long each time up to `retry_max_seconds`, until one runs (any change also runs one)."""

    def __init__(self, settings: WatchSettings) -> None:
        self._settings = settings
        self._delay = settings.retry_first_seconds
        self._at: float | None = None

    def due(self) -> bool:
        return self._at is not None and time.monotonic() >= self._at

    def after(self, update: WatchUpdate) -> WatchUpdate:
        """Schedules the retry `update` needs, and says in its error when it comes: the lock's own
        fix line suggests a `--wait` that watch has no use for."""
        if not isinstance(update.error, IndexBusyError):
            self._at = None
            self._delay = self._settings.retry_first_seconds
            return update
        delay = self._delay
        self._at = time.monotonic() + delay
        self._delay = min(delay * 2, self._settings.retry_max_seconds)
        busy = IndexBusyError(
            update.error.message,
            f"the update is tried again in {delay:g}s, or at the next change; nothing is lost meanwhile",
        )
        return replace(update, error=busy)


def _identities(roots: Sequence[Path]) -> list[tuple[int, int] | None]:
    """What each root names now (device and inode), None when it is gone."""
    found: list[tuple[int, int] | None] = []
    for root in roots:
        try:
            st = root.stat()
        except OSError:
            found.append(None)
        else:
            found.append((st.st_dev, st.st_ino))
    return found


def _present(roots: Sequence[Path], stop: threading.Event, on_update: Callable[[WatchUpdate], None]) -> bool:
    """Waits until every root exists (saying once that one is gone); False when stopped meanwhile."""
    said = False
    while not stop.is_set():
        gone = [r for r in roots if not r.exists()]
        if not gone:
            return True
        if not said:
            said = True
            on_update(
                WatchUpdate(
                    0,
                    error=RaggityError(
                        f"{gone[0]}: the watched folder is gone (renamed or deleted)",
                        "it is watched and indexed again as soon as a folder of that name is back",
                    ),
                )
            )
        stop.wait(GONE_POLL_SECONDS)
    return False
