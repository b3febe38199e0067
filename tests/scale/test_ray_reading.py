"""The Ray engine's read stage (ChunkFiles) opens a file by the real path discovery checked, with no
link followed, as the in-process engine does: a file reached through a link inside the folder is
read under its own name, and a folder swapped for a link after discovery is refused, not followed.
The stage runs here without a cluster; its tally (a Ray actor on a cluster) is a recorder passed
through the constructor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raggity.config.schema import EmbeddingConfig
from raggity.documents.chunker import ChunkingSettings
from raggity.models.registry import resolve_embedder
from raggity.pipeline.ingest.ray_engine import ChunkerSpec, ChunkFiles, SourceResult


class _Method:
    def __init__(self, calls: list[tuple[str, tuple[Any, ...]]], name: str) -> None:
        self._calls = calls
        self._name = name

    def remote(self, *args: Any) -> None:
        self._calls.append((self._name, args))


class RecordingTally:
    """What the stage reports, in order: ("read", (SourceResult,)) or ("skip", (source, reason))."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.read = _Method(self.calls, "read")
        self.skip = _Method(self.calls, "skip")


def _stage(tmp_path: Path) -> tuple[ChunkFiles, RecordingTally]:
    files = resolve_embedder(EmbeddingConfig(), tmp_path)
    tally = RecordingTally()
    return ChunkFiles(ChunkerSpec(str(files.tokenizer), ChunkingSettings(64, 256)), tally), tally


def test_a_file_reached_through_a_link_is_read_by_its_real_path_under_its_own_name(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    real = docs / "real.md"
    real.write_text("# Kettles\n\nThe kettle descaler runs every Tuesday.\n", encoding="utf-8")
    link = docs / "link.md"
    link.symlink_to(real)
    stage, tally = _stage(tmp_path)

    rows = list(stage({"source": str(link), "real": str(real)}))

    assert rows, tally.calls
    assert {row["source"] for row in rows} == {str(link)}
    assert any("descaler" in row["text"] for row in rows)
    [(kind, (result,))] = tally.calls
    assert kind == "read"
    assert isinstance(result, SourceResult)
    assert result.source == str(link)


def test_a_folder_swapped_for_a_link_after_discovery_is_not_followed(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir()
    (private / "notes.md").write_text("The vault passphrase is ZEBRA.\n", encoding="utf-8")
    sub = tmp_path / "docs" / "sub"
    sub.mkdir(parents=True)
    notes = sub / "notes.md"
    notes.write_text("cats\n", encoding="utf-8")
    real = str(notes.resolve())  # what discovery checked
    stage, tally = _stage(tmp_path)
    sub.rename(tmp_path / "docs" / ".moved")
    sub.symlink_to(private)  # swapped after discovery, before the worker reads

    rows = list(stage({"source": str(notes), "real": real}))

    assert rows == []
    [(kind, (source, reason))] = tally.calls
    assert kind == "skip"
    assert source == str(notes)
    # In the worker's words the driver's (pipeline/ingest/reading.open_source, one place for both).
    assert reason == "a folder on its path was replaced by a symlink (not followed)"
