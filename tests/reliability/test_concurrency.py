"""Concurrent use of one index: a second writer is refused (or waits), a writer killed with
SIGKILL leaves no stale lock, and searches during an ingest see only committed rows."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from raggity.api.doctor import run_checks
from raggity.api.session import Models, Raggity
from raggity.config.loader import load_config
from raggity.config.schema import Config
from raggity.store.ingest_lock import IngestLock
from raggity.store.layout import IndexLayout
from tests.reliability.helpers import (
    QUERY,
    file_text,
    rag,
    rag_popen,
    read_state,
    write_corpus,
    write_rag_config,
)


@pytest.fixture(scope="module")
def models() -> Models:
    """One loaded embedder and tokenizer, shared by the in-process sessions of this module."""
    shared = Models(Config())
    _ = shared.embedder, shared.tokenizer
    return shared


def session(config: Path, models: Models) -> Raggity:
    return Raggity(load_config(config), embedder=models.embedder, tokenizer=models.tokenizer)


def test_second_ingest_is_refused_then_waits(tmp_path: Path) -> None:
    config = write_rag_config(tmp_path)
    write_corpus(tmp_path / "docs", 4)
    layout = IndexLayout(tmp_path / ".raggity")
    with IngestLock(layout.lock):
        busy = rag(config, "ingest")
        assert busy.returncode == 5, busy.stderr
        assert "Traceback" not in busy.stderr
        assert f"{layout.root}: another ingest is running (pid {os.getpid()})" in busy.stderr
        assert "--wait" in busy.stderr
        waiting = rag_popen(config, "ingest", "--wait", "120")
        time.sleep(2.5)
        assert waiting.poll() is None, "ingest --wait did not wait for the lock"
    _, err = waiting.communicate(timeout=180)
    assert waiting.returncode == 0, err
    state = read_state(layout.root)
    assert state.live_ids
    assert state.live_ids == state.table_ids == state.bm25_ids


def test_lock_of_a_killed_ingest_is_not_stale(tmp_path: Path) -> None:
    config = write_rag_config(tmp_path)
    write_corpus(tmp_path / "docs", 6)
    layout = IndexLayout(tmp_path / ".raggity")
    killed = rag(config, "ingest", env={"RAGGITY_KILL_AT": "lancedb:added", "RAGGITY_BATCH_CHUNKS": "4"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    dead_pid = int(layout.lock.read_text().strip())  # the lock file still names the dead holder
    with pytest.raises(ProcessLookupError):
        os.kill(dead_pid, 0)
    again = rag(config, "ingest")
    assert again.returncode == 0, again.stderr
    state = read_state(layout.root)
    assert state.live_ids
    assert state.live_ids == state.table_ids == state.bm25_ids
    assert state.clean


def test_searches_during_an_ingest(tmp_path: Path, models: Models) -> None:
    config = write_rag_config(tmp_path)
    docs = tmp_path / "docs"
    paths = write_corpus(docs, 8)
    reader = session(config, models)
    reader.ingest()
    # Changes for the concurrent ingest: replaced, removed and new files, many small commits.
    for path in paths[:3]:
        path.write_text(file_text(path.stem + "-v2", 3), encoding="utf-8")
    for path in paths[3:5]:
        path.unlink()
    for i in range(6):
        (docs / f"extra{i}.md").write_text(file_text(f"extra{i}", 3), encoding="utf-8")

    writer = rag_popen(config, "ingest", env={"RAGGITY_BATCH_CHUNKS": "2"})
    cli_search = None
    searches = 0
    while writer.poll() is None or searches == 0:
        fresh = searches % 2 == 1  # alternate a long-lived session with a new one
        current = session(config, models) if fresh else reader
        result = current.search(QUERY, k=20)
        ids = [c.chunk.id for c in result.candidates]
        assert len(ids) == len(set(ids)), f"duplicate ids: {ids}"
        assert all(c.chunk.text.strip() for c in result.candidates)
        searches += 1
        if cli_search is None:
            cli_search = rag_popen(config, "search", "--json", "-k", "20", QUERY)
    _, err = writer.communicate(timeout=180)
    assert writer.returncode == 0, err
    assert cli_search is not None
    out, err = cli_search.communicate(timeout=120)
    assert cli_search.returncode == 0, err
    found = [r["id"] for r in json.loads(out)]
    assert len(found) == len(set(found))
    assert searches >= 3, f"only {searches} searches overlapped the ingest"
    state = read_state(tmp_path / ".raggity")
    assert state.clean
    assert state.live_ids == state.table_ids == state.bm25_ids


def test_doctor_tells_a_running_ingest_from_an_interrupted_one(tmp_path: Path) -> None:
    config = write_rag_config(tmp_path)
    write_corpus(tmp_path / "docs", 6)
    layout = IndexLayout(tmp_path / ".raggity")
    assert rag(config, "ingest").returncode == 0
    (tmp_path / "docs" / "extra.md").write_text(file_text("extra", 3), encoding="utf-8")
    # Rows written but not committed: what a running ingest and a killed one both leave.
    killed = rag(config, "ingest", env={"RAGGITY_KILL_AT": "lancedb:added"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    stores = {c.name: c for c in run_checks(load_config(config))}["index stores"]
    assert "leftover rows from an interrupted ingest" in stores.message
    with IngestLock(layout.lock):
        stores = {c.name: c for c in run_checks(load_config(config))}["index stores"]
    assert stores.message.startswith(f"an ingest is running (pid {os.getpid()});")
    assert stores.ok
