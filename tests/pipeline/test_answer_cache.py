"""The answer cache: hits skip the generator entirely, misses and --no-cache call it, re-ingest
invalidates, concurrent writers leave only whole files, and the folder stays bounded."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

from raggity.api.cache import cache_stats, clear_cache
from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.store.cache_store import CacheStore
from raggity.testing import ScriptedGenerator
from tests.support import write_config

QUESTION = "How much free disk space does the frobnicator need on Linux?"
INSTALL = (
    "# Frobnicator\n\nThe frobnicator is a command line tool that tidies configuration files.\n\n"
    "## Installing on Linux\n\nOn Linux the frobnicator needs 2 GB of free disk space.\n"
)
SOURDOUGH = (
    "Sourdough starter care\n\nFeed the starter every day with equal weights of rye flour and water.\n"
)


ANSWER = "It needs 2 GB of free disk space [1]."


def fake_generator() -> ScriptedGenerator:
    return ScriptedGenerator(lambda _: ANSWER)


def _must_not_generate(_: object) -> str:
    raise AssertionError("the generator was asked to generate")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "install.md").write_text(INSTALL, encoding="utf-8")
    (docs / "sourdough.txt").write_text(SOURDOUGH, encoding="utf-8")
    config = write_config(tmp_path, generation={"cache": True})
    Raggity(load_config(config)).ingest([docs])
    return config


def _session(config: Path, generator: ScriptedGenerator | None) -> Raggity:
    """A session answering with `generator`; None: a generator (of the same identity) that fails the
    test if it is asked for anything."""
    return Raggity(load_config(config), generator=generator or ScriptedGenerator(_must_not_generate))


def test_hit_returns_the_stored_answer_without_loading_the_generator(project: Path) -> None:
    fake = fake_generator()
    first = _session(project, fake).ask(QUESTION)
    assert not first.cached
    assert len(fake.calls) == 1
    second = _session(project, None).ask(QUESTION)
    assert second.cached
    assert second.text == first.text
    assert second.citations == first.citations
    assert any(t.stage == "answer-cache" and t.detail["hit"] for t in second.trace)
    assert not any(t.stage in ("load-model", "generate") for t in second.trace)


def test_a_hit_keeps_the_sources_attached_by_meaning_and_embeds_nothing_again(project: Path) -> None:
    # No source holds the second sentence's words: the meaning stage (the real embedder) checks it.
    paraphrase = ScriptedGenerator(lambda _: f"{ANSWER} Linux installs require two gigabytes of storage.")
    first = _session(project, paraphrase).ask(QUESTION)
    assert any(t.stage == "meaning" for t in first.trace)
    second = _session(project, None).ask(QUESTION)
    assert second.cached
    assert second.citations == first.citations
    assert second.unsupported_sentences == first.unsupported_sentences
    assert not any(t.stage == "meaning" for t in second.trace)


def test_streaming_hit_calls_on_token_once_with_the_whole_text(project: Path) -> None:
    first = _session(project, fake_generator()).ask(QUESTION)
    pieces: list[str] = []
    second = _session(project, None).ask(QUESTION, on_token=pieces.append)
    assert second.cached
    assert pieces == [first.text]


def test_a_different_question_misses(project: Path) -> None:
    fake = fake_generator()
    session = _session(project, fake)
    session.ask(QUESTION)
    other = session.ask("What does the frobnicator tidy?")
    assert not other.cached
    assert len(fake.calls) == 2


def test_no_cache_neither_reads_nor_writes(project: Path) -> None:
    fake = fake_generator()
    session = _session(project, fake)
    session.ask(QUESTION, use_cache=False)
    assert cache_stats(session.config).entries == 0
    session.ask(QUESTION)
    again = session.ask(QUESTION, use_cache=False)
    assert not again.cached
    assert len(fake.calls) == 3


def test_reingesting_a_relied_on_file_invalidates(project: Path) -> None:
    fake = fake_generator()
    session = _session(project, fake)
    session.ask(QUESTION)
    assert session.ask(QUESTION).cached
    install = project.parent / "docs" / "install.md"
    install.write_text(INSTALL.replace("2 GB", "3 GB"), encoding="utf-8")
    session.ingest([install.parent])
    after = session.ask(QUESTION)
    assert not after.cached
    assert len(fake.calls) == 2
    assert session.ask(QUESTION).cached


def test_text_added_above_the_cited_chunk_invalidates(project: Path) -> None:
    """The cited chunk keeps its id when lines are added above it, but a cached answer would cite
    stale line numbers: the key includes where each source sits."""
    fake = fake_generator()
    session = _session(project, fake)
    first = session.ask(QUESTION)
    install = project.parent / "docs" / "install.md"
    install.write_text("Preface line one.\n\nPreface line two.\n\n" + INSTALL, encoding="utf-8")
    session.ingest([install.parent])
    after = session.ask(QUESTION)
    assert not after.cached
    assert len(fake.calls) == 2
    moved = {c.source: c.location for c in after.citations}
    assert moved[str(install)] != {c.source: c.location for c in first.citations}[str(install)]


def test_cache_clear_and_stats(project: Path) -> None:
    session = _session(project, fake_generator())
    session.ask(QUESTION)
    stats = cache_stats(session.config)
    assert stats.entries == 1
    assert stats.bytes > 0
    assert clear_cache(session.config) == 1
    assert cache_stats(session.config).entries == 0


def _writer(folder: str, tag: str, rounds: int, start: Any) -> None:
    store = CacheStore(Path(folder), max_entries=1000)
    start.wait()  # both processes past their slow spawn and imports before the first write
    for i in range(rounds):
        store.put("shared", {"kind": "test", "writer": tag, "i": i, "pad": "x" * 2000})
        store.put(f"{tag}-{i % 5}", {"kind": "test", "writer": tag, "i": i})


def test_concurrent_writers_leave_only_whole_files(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), tag, 300, start)) for tag in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        if p.exitcode is None:
            p.kill()
        assert p.exitcode == 0
    files = sorted(os.listdir(tmp_path))
    assert not [f for f in files if f.endswith(".tmp")]
    assert len(files) == 11  # shared + 5 keys per writer
    for name in files:
        data = json.loads((tmp_path / name).read_text(encoding="utf-8"))
        assert data["kind"] == "test"


def test_eviction_keeps_the_most_recently_used(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, max_entries=5)
    for i in range(5):
        store.put(f"k{i}", {"i": i})
        os.utime(tmp_path / f"k{i}.json", (1000 + i, 1000 + i))
    assert store.get("k0") == {"i": 0}  # touched: now the newest
    for i in range(5, 8):
        store.put(f"k{i}", {"i": i})
    kept = {p.stem for p in tmp_path.glob("*.json")}
    assert len(kept) == 5
    assert "k0" in kept
    assert not {"k1", "k2", "k3"} & kept


def test_eviction_by_size(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, max_bytes=5000)
    for i in range(10):
        store.put(f"k{i}", {"pad": "x" * 1000})  # 1,011 bytes on disk: four fit, five do not
        os.utime(tmp_path / f"k{i}.json", (1000 + i, 1000 + i))  # distinct ages, whatever the clock
    assert store.stats().bytes <= 5000
    assert {p.stem for p in tmp_path.glob("*.json")} == {"k6", "k7", "k8", "k9"}


def test_unreadable_entry_is_a_miss(tmp_path: Path) -> None:
    store = CacheStore(tmp_path)
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    assert store.get("bad") is None
    assert store.get("absent") is None
