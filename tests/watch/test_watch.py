"""`rag watch`: the watcher loop in a thread against a real index, and the command under Ctrl-C."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from raggity.api import Raggity, load_config
from raggity.api.watch import OutsideIndexFilter, WatchSettings, WatchUpdate, watch_index
from raggity.core.protocols import Embedder
from raggity.store.layout import IndexLayout
from tests.support import RAG, store_ids, write_config, write_corpus

# A bound on how long a change may take to show up, so that a broken watcher fails instead of hanging.
PATIENCE_SECONDS = 120.0


def eventually(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE_SECONDS
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory, _state_dirs: dict[str, Path]) -> Embedder:
    """One real ONNX embedder shared by the module's sessions (loading it is the slow part)."""
    from tests.isolation import isolated_state  # noqa: PLC0415 - imported where the test needs it

    with isolated_state(_state_dirs):
        return Raggity(load_config(write_config(tmp_path_factory.mktemp("embedder")))).models.embedder


@dataclass
class Watching:
    session: Raggity
    docs: Path
    stop: threading.Event
    updates: list[WatchUpdate] = field(default_factory=list)
    ready: threading.Event = field(default_factory=threading.Event)
    failure: list[BaseException] = field(default_factory=list)

    def sources(self, query: str) -> list[str]:
        fresh = Raggity(self.session.config, embedder=self.session.models.embedder)
        return [c.chunk.source for c in fresh.search(query, k=3).candidates]

    def changed(self) -> list[WatchUpdate]:
        return [u for u in self.updates if u.events and u.changed_anything]


@pytest.fixture
def watching(tmp_path: Path, embedder: Embedder) -> Iterator[Watching]:
    config = write_config(
        tmp_path, index={"path": str(tmp_path / "docs" / ".raggity")}, ingest={"paths": ["docs"]}
    )
    write_corpus(tmp_path / "docs")
    w = Watching(Raggity(load_config(config), embedder=embedder), tmp_path / "docs", threading.Event())

    def run() -> None:
        try:
            watch_index(
                w.session,
                stop=w.stop,
                on_update=w.updates.append,
                settings=WatchSettings(quiet_ms=300, max_wait_ms=3_000),
                on_ready=lambda roots: w.ready.set(),
            )
        except BaseException as exc:
            w.failure.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    eventually(lambda: w.ready.is_set() or bool(w.failure), "the first ingest")
    yield w
    w.stop.set()
    thread.join(timeout=PATIENCE_SECONDS)
    assert not thread.is_alive(), "the watcher did not stop"
    assert w.failure == []


def test_edits_additions_and_deletions_reach_the_index(watching: Watching) -> None:
    w = watching
    [start] = w.updates
    assert start.report is not None
    assert start.report.added == 6
    # The index lives inside the watched folder; its own writes must not wake the watcher.
    assert all(u.report is not None and not u.changed_anything for u in w.updates[1:])

    (w.docs / "otters.md").write_text(
        "# Otters\n\nSea otters hold hands while they sleep.\n", encoding="utf-8"
    )
    eventually(
        lambda: str(w.docs / "otters.md") in w.sources("sea otters sleep holding hands"), "an added file"
    )

    (w.docs / "sourdough.txt").write_text(
        "Sourdough starter care\n\nFeed the levain with spelt flour and a pinch of malted barley.\n",
        encoding="utf-8",
    )
    # Not changed()[-1]: the search above can see the added file before the watcher has recorded
    # that update, and then there was no last update to read (an IndexError in CI).
    eventually(
        lambda: any(u.report is not None and u.report.changed == 1 for u in w.changed()), "an edited file"
    )
    fresh = Raggity(w.session.config, embedder=w.session.models.embedder)
    texts = [c.chunk.text for c in fresh.search("levain malted barley spelt", k=1).candidates]
    assert "malted barley" in texts[0]

    (w.docs / "jupiter.rst").unlink()
    # The run must have finished, not only unlisted the file: it unlists before it deletes rows, so
    # a search stops finding it while the stores still hold its rows.
    eventually(lambda: any(u.report is not None and u.report.removed == 1 for u in w.updates), "a delete")
    assert str(w.docs / "jupiter.rst") not in w.sources("Galilean satellites Io volcanoes")

    assert all(u.error is None for u in w.updates)
    store_ids(IndexLayout(w.session.config.index_dir))


def test_a_burst_of_saves_is_fewer_ingests_than_saves(watching: Watching) -> None:
    w = watching
    for n in range(20):
        (w.docs / f"note{n}.md").write_text(
            f"# Note {n}\n\nThe heron number {n} stands still.\n", encoding="utf-8"
        )
    eventually(lambda: sum(u.report.added for u in w.changed() if u.report) == 20, "the burst to be indexed")
    assert len(w.changed()) < 20


def test_a_file_that_vanishes_mid_write_does_not_stop_the_watcher(watching: Watching) -> None:
    w = watching
    for n in range(30):
        flicker = w.docs / f"flicker{n}.md"
        flicker.write_text("# Flicker\n\nHere and gone.\n", encoding="utf-8")
        flicker.unlink()
    (w.docs / "after.md").write_text("# After\n\nThe kestrel hovers over the verge.\n", encoding="utf-8")
    eventually(
        lambda: str(w.docs / "after.md") in w.sources("kestrel hovers verge"), "a file after the flicker"
    )
    assert all(u.error is None for u in w.updates)
    assert not any("flicker" in s for s in w.sources("Flicker here and gone"))
    store_ids(IndexLayout(w.session.config.index_dir))


def test_a_file_whose_name_is_not_utf8_is_skipped_and_the_watcher_goes_on(watching: Watching) -> None:
    w = watching
    # The native watcher cannot make a str of this name and stopped at its event, so nothing after
    # it was indexed.
    # Several such files, each written in steps, in a burst: every event stops the native watcher.
    for n in range(3):
        odd = w.docs / os.fsdecode(b"caf\xe9%d.md" % n)
        for line in ("# Cafe\n", "\nThe espresso machine hisses.\n", "It steams the milk.\n"):
            with odd.open("a", encoding="utf-8") as handle:
                handle.write(line)
            time.sleep(0.1)
    eventually(
        lambda: any(
            u.report is not None and any("not valid UTF-8" in s.reason for s in u.report.skipped)
            for u in w.updates
        ),
        "the skip of the file whose name is not UTF-8",
    )
    (w.docs / "later.md").write_text("# Later\n\nThe barn owl nests in the loft.\n", encoding="utf-8")
    eventually(lambda: str(w.docs / "later.md") in w.sources("barn owl nests loft"), "a file after it")
    assert w.failure == []


def test_ignored_files_are_not_indexed(watching: Watching) -> None:
    w = watching
    (w.docs / ".gitignore").write_text("drafts/\n", encoding="utf-8")
    (w.docs / "drafts").mkdir()
    (w.docs / "drafts" / "secret.md").write_text("# Draft\n\nThe walrus plan is secret.\n", encoding="utf-8")
    (w.docs / "public.md").write_text("# Public\n\nThe walrus parade is on Sunday.\n", encoding="utf-8")
    eventually(lambda: str(w.docs / "public.md") in w.sources("walrus"), "the public file")
    assert str(w.docs / "drafts" / "secret.md") not in w.sources("walrus plan secret")


def test_the_filter_drops_the_index_folder_and_editor_droppings_only(tmp_path: Path) -> None:
    from watchfiles import Change  # noqa: PLC0415 - imported where the test needs it

    keep = OutsideIndexFilter(tmp_path / "docs" / ".raggity")
    assert not keep(Change.modified, str(tmp_path / "docs" / ".raggity" / "manifest.json"))
    assert not keep(Change.added, str(tmp_path / "docs" / ".raggity"))
    assert not keep(Change.modified, str(tmp_path / "docs" / ".git" / "index"))
    assert not keep(Change.added, str(tmp_path / "docs" / "notes.md.swp"))
    assert keep(Change.modified, str(tmp_path / "docs" / "notes.md"))
    assert keep(Change.deleted, str(tmp_path / "docs" / ".raggity-notes.md"))


class StopDuringIngest:
    """IngestProgress that sets `stop` as soon as an ingest after the first one starts embedding."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.plans = 0

    def planned(self, files: int, sizes: Mapping[str, int]) -> None:
        self.plans += 1

    def read(self, kind: str, size: int, chunks: int) -> None:
        pass

    def advanced(self, files: int, chunks: int, tokens: int) -> None:
        if self.plans > 1:
            self.stop.set()

    def warn(self, source: str, reason: str) -> None:
        pass


def test_stop_during_an_ingest_lets_it_commit_then_returns(tmp_path: Path, embedder: Embedder) -> None:
    config = write_config(tmp_path, index={"path": str(tmp_path / "index")})
    write_corpus(tmp_path / "docs")
    session = Raggity(load_config(config), embedder=embedder)
    stop = threading.Event()
    updates: list[WatchUpdate] = []
    progress = StopDuringIngest(stop)

    def on_ready(roots: tuple[Path, ...]) -> None:
        (tmp_path / "docs" / "otters.md").write_text("# Otters\n\nSea otters hold hands.\n", encoding="utf-8")

    done = threading.Thread(
        target=lambda: watch_index(
            session,
            [tmp_path / "docs"],
            stop=stop,
            on_update=updates.append,
            on_ready=on_ready,
            progress=progress,
            settings=WatchSettings(quiet_ms=200, max_wait_ms=2_000),
        ),
        daemon=True,
    )
    done.start()
    done.join(timeout=PATIENCE_SECONDS)

    assert not done.is_alive(), "the watcher did not stop"
    assert stop.is_set()
    [_, last] = updates
    assert last.report is not None
    assert last.report.added == 1
    ids = store_ids(session.layout)
    assert ids
    assert str((tmp_path / "docs" / "otters.md").resolve()) in load_manifest_sources(session)


def load_manifest_sources(session: Raggity) -> set[str]:
    from raggity.store.manifest import load_manifest  # noqa: PLC0415 - imported where the test needs it

    return set(load_manifest(session.layout.manifest).sources)


def test_rag_watch_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    config = write_config(tmp_path, ingest={"paths": ["docs"]})
    write_corpus(tmp_path / "docs")
    proc = subprocess.Popen(
        [str(RAG), "watch", "--config", str(config)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("watching"):
            break
    (tmp_path / "docs" / "otters.md").write_text("# Otters\n\nSea otters hold hands.\n", encoding="utf-8")
    for line in proc.stdout:
        lines.append(line)
        if "1 added" in line:
            break
    proc.send_signal(signal.SIGINT)
    rest, stderr = proc.communicate(timeout=PATIENCE_SECONDS)
    lines += rest.splitlines(keepends=True)

    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert "start: 6 added" in lines[0]
    assert lines[1].startswith(f"watching {tmp_path / 'docs'}")
    assert " change" in lines[2]
    assert "1 added" in lines[2]
    assert lines[-1].startswith("stopped")
    assert "stopping after the current update" in stderr
    ids = store_ids(IndexLayout(tmp_path / ".raggity"))
    assert len(ids) > 6


def test_a_missing_folder_is_a_clear_error_before_anything_is_watched(tmp_path: Path) -> None:
    from raggity.api import RaggityError  # noqa: PLC0415 - imported where the test needs it

    session = Raggity(load_config(write_config(tmp_path)))
    with pytest.raises(RaggityError, match="no such file or folder to watch"):
        watch_index(session, [tmp_path / "nowhere"], stop=threading.Event(), on_update=lambda u: None)
    assert not (tmp_path / ".raggity").exists()


def test_a_folder_whose_name_is_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    from raggity.api import RaggityError  # noqa: PLC0415 - imported where the test needs it

    odd = tmp_path / os.fsdecode(b"d\xe9")
    odd.mkdir()
    session = Raggity(load_config(write_config(tmp_path)))
    with pytest.raises(RaggityError, match="not valid UTF-8"):
        watch_index(session, [odd], stop=threading.Event(), on_update=lambda u: None)
    # Inside a watched folder, such a folder stops the native watcher each time it starts.
    (tmp_path / "docs" / os.fsdecode(b"sub\xe9")).mkdir(parents=True)
    with pytest.raises(RaggityError, match="not valid UTF-8"):
        watch_index(session, [tmp_path / "docs"], stop=threading.Event(), on_update=lambda u: None)


@contextmanager
def watcher(session: Raggity, docs: Path, settings: WatchSettings) -> Iterator[list[WatchUpdate]]:
    """`watch_index` over `docs` in a thread for the body of the with; its updates as they come."""
    stop = threading.Event()
    updates: list[WatchUpdate] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            watch_index(session, [docs], stop=stop, on_update=updates.append, settings=settings)
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield updates
    finally:
        stop.set()
        thread.join(timeout=PATIENCE_SECONDS)
    assert not thread.is_alive(), "the watcher did not stop"
    assert failure == []


def test_a_renamed_then_recreated_folder_is_watched_and_indexed_again(
    tmp_path: Path, embedder: Embedder
) -> None:
    config = write_config(tmp_path, index={"path": str(tmp_path / "index")})
    docs = tmp_path / "docs"
    write_corpus(docs)
    session = Raggity(load_config(config), embedder=embedder)

    def indexed() -> set[str]:
        return load_manifest_sources(session) if session.layout.manifest.exists() else set()

    with watcher(session, docs, WatchSettings(quiet_ms=200, max_wait_ms=2_000)) as updates:
        eventually(lambda: any(u.report is not None for u in updates), "the first ingest")
        docs.rename(tmp_path / "docs-old")
        docs.mkdir()
        otters = docs / "otters.md"
        otters.write_text("# Otters\n\nSea otters hold hands while they sleep.\n", encoding="utf-8")
        eventually(lambda: str(otters.resolve()) in indexed(), "a file in the new folder of that name")
        # And it is that folder that is watched now, not the renamed one.
        rivers = docs / "rivers.md"
        rivers.write_text("# Rivers\n\nThe Danube flows into the Black Sea.\n", encoding="utf-8")
        eventually(lambda: str(rivers.resolve()) in indexed(), "a later file in the new folder")
        assert indexed() == {str(otters.resolve()), str(rivers.resolve())}

        # Deleted: said once, and indexed again once it is back.
        shutil.rmtree(docs)
        eventually(lambda: any(u.error is not None and "is gone" in u.error.message for u in updates), "gone")
        docs.mkdir()
        otters.write_text("# Otters\n\nSea otters hold hands while they sleep.\n", encoding="utf-8")
        eventually(lambda: indexed() == {str(otters.resolve())}, "the folder made again")
    assert sum(1 for u in updates if u.error is not None) == 1


def test_an_update_refused_by_a_busy_lock_is_retried_and_says_so(tmp_path: Path, embedder: Embedder) -> None:
    from raggity.store.ingest_lock import IngestLock  # noqa: PLC0415 - imported where the test needs it

    config = write_config(tmp_path, index={"path": str(tmp_path / "index")})
    docs = tmp_path / "docs"
    write_corpus(docs)
    session = Raggity(load_config(config), embedder=embedder)
    settings = WatchSettings(quiet_ms=200, max_wait_ms=2_000, busy_wait_seconds=0.2, retry_first_seconds=0.5)

    lock = IngestLock(session.layout.lock).__enter__()
    try:
        with watcher(session, docs, settings) as updates:
            # Another ingest holds the lock: the first update is refused, then tried again without
            # any file changing, each time after a longer pause.
            eventually(lambda: len(updates) >= 2, "a retry while the lock is held")
            busy = updates[0].error
            assert busy is not None
            assert "another ingest is running" in busy.message
            assert "--wait" not in busy.hint
            assert "tried again in 0.5s" in busy.hint
            assert updates[1].error is not None
            assert "tried again in 1s" in updates[1].error.hint
            lock.__exit__(None, None, None)
            eventually(lambda: any(u.report is not None for u in updates), "an update once the lock is free")
            assert [u.report.added for u in updates if u.report is not None] == [6]
    finally:
        lock.__exit__(None, None, None)


def _report(*skipped: tuple[str, str]) -> WatchUpdate:
    from raggity.pipeline.ingest.sync import IngestReport, Skipped  # noqa: PLC0415 - imported where the test needs it

    report = IngestReport(
        added=0,
        changed=1,
        removed=0,
        unchanged=5,
        skipped=tuple(Skipped(source, reason) for source, reason in skipped),
        chunks_written=1,
        tokens_embedded=10,
        seconds=0.1,
        embed_seconds=0.1,
        rebuilt=False,
        repaired=0,
    )
    return WatchUpdate(1, report=report)


def test_each_skipped_file_is_said_once_until_it_is_fixed(capsys: pytest.CaptureFixture[str]) -> None:
    from raggity.cli.watch_command import UpdatePrinter  # noqa: PLC0415 - imported where the test needs it

    printer = UpdatePrinter()
    broken = ("/docs/broken.pdf", "not a valid PDF")
    printer(_report(broken))
    printer(_report(broken, ("/docs/big.txt", "larger than max_file_mb")))
    printer(_report())  # both fixed
    printer(_report(broken))  # broken again
    shown = capsys.readouterr()

    assert shown.err.count("skipped /docs/broken.pdf: not a valid PDF") == 2
    assert shown.err.count("skipped /docs/big.txt") == 1
    assert shown.out.count("1 changed") == 4
