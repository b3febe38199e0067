"""Stale or absent, told apart: an answer flags files changed since they were indexed, and a decline
says when the indexed folders hold files newer than the index."""

from __future__ import annotations

import os
import time
from pathlib import Path

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.testing import ScriptedGenerator
from tests.support import must_not_generate, write_config

NOTE = "The restic repository password is kept in the office vault, second drawer.\n"
QUESTION = "Where is the restic repository password kept?"
ANSWER = "The restic repository password is kept in the office vault."


def _indexed(tmp_path: Path) -> tuple[Raggity, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    note = docs / "backups.md"
    note.write_text(NOTE, encoding="utf-8")
    past = time.time() - 60  # older than the racy-stamp window, so the stamp is recorded
    os.utime(note, (past, past))
    config = load_config(write_config(tmp_path, retrieval={"rerank": False}))
    Raggity(config).ingest([docs])
    return Raggity(config, generator=ScriptedGenerator(lambda _: ANSWER)), note


def test_an_answer_flags_a_cited_file_that_changed_since_ingest(tmp_path: Path) -> None:
    session, note = _indexed(tmp_path)
    assert session.ask(QUESTION).changed_sources == ()

    note.write_text(NOTE.replace("second", "third"), encoding="utf-8")
    answer = session.ask(QUESTION)

    assert not answer.declined
    assert answer.changed_sources == (str(note.resolve()),)
    stage = {t.stage: t for t in answer.trace}["freshness"]
    assert stage.detail["changed"] == 1


def test_a_touched_file_with_the_same_bytes_is_not_flagged(tmp_path: Path) -> None:
    session, note = _indexed(tmp_path)
    os.utime(note)  # a new mtime, the same content: the hash tells

    assert session.ask(QUESTION).changed_sources == ()


def test_a_deleted_file_is_flagged(tmp_path: Path) -> None:
    session, note = _indexed(tmp_path)
    note.unlink()

    assert session.ask(QUESTION).changed_sources == (str(note.resolve()),)


def test_a_decline_counts_the_files_written_since_the_last_ingest(tmp_path: Path) -> None:
    session, note = _indexed(tmp_path)
    declining = Raggity(session.config, generator=ScriptedGenerator(must_not_generate))
    question = "What is the capital of Mongolia?"
    assert declining.ask(question).newer_files == 0

    (note.parent / "geography.md").write_text("Ulaanbaatar is the capital of Mongolia.\n", encoding="utf-8")
    (note.parent / ".swap.md").write_text("editor leftovers\n", encoding="utf-8")  # hidden: not counted
    answer = declining.ask(question)

    assert answer.abstained
    assert answer.newer_files == 1


def test_a_decline_counts_an_indexed_file_written_again_only_when_its_bytes_changed(tmp_path: Path) -> None:
    session, note = _indexed(tmp_path)
    declining = Raggity(session.config, generator=ScriptedGenerator(must_not_generate))
    question = "What is the capital of Mongolia?"

    note.write_text(NOTE, encoding="utf-8")  # written again, the same bytes: ingest would find nothing
    assert declining.ask(question).newer_files == 0

    note.write_text(NOTE.replace("second", "fourth"), encoding="utf-8")  # the same size, other bytes
    assert declining.ask(question).newer_files == 1


def _swapped_for_a_link(folder: Path, outside: Path) -> None:
    """The indexed folder moved aside and a link to `outside`, holding a copy of its files, in its place."""
    outside.mkdir()
    for item in folder.iterdir():
        (outside / item.name).write_bytes(item.read_bytes())
    folder.rename(folder.with_name("aside"))
    folder.symlink_to(outside, target_is_directory=True)


def test_a_cited_file_behind_a_folder_swapped_for_a_link_is_flagged_not_read(tmp_path: Path) -> None:
    """The check opens the indexed path with no link followed on it: the same bytes behind a link
    are not the indexed file, whose folder is gone."""
    session, note = _indexed(tmp_path)
    _swapped_for_a_link(note.parent, tmp_path / "outside")

    assert session.ask(QUESTION).changed_sources == (str(note),)


def test_a_decline_counts_no_file_behind_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    session, note = _indexed(tmp_path)
    declining = Raggity(session.config, generator=ScriptedGenerator(must_not_generate))
    outside = tmp_path / "outside"
    _swapped_for_a_link(note.parent, outside)
    (outside / "geography.md").write_text("Ulaanbaatar is the capital of Mongolia.\n", encoding="utf-8")

    answer = declining.ask("What is the capital of Mongolia?")

    assert answer.abstained
    assert answer.newer_files == 0
