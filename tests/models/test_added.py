"""`rag models add PATH.gguf`: a GGUF of your own under a name, hashed once and pinned like a pulled
model (the real packaged SmolLM2 GGUF stands in for it)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from raggity.api.model_store import add_model, list_generators
from raggity.config.schema import Config, GenerationConfig
from raggity.core.errors import ModelError
from raggity.models.download import MANIFEST_NAME
from raggity.models.registry import models_home, resolve_generator
from tests.support import assert_clean_error, rag

SMALL = "smollm2-135m-instruct"


def _own_copy(tmp_path: Path) -> Path:
    """A GGUF outside every package, as a user's own file is."""
    source = resolve_generator(GenerationConfig(model=SMALL), Path(".")).gguf
    mine = tmp_path / "downloads" / "my-model.Q4.gguf"
    mine.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, mine)
    return mine


def test_an_added_model_is_named_pinned_and_resolved(tmp_path: Path) -> None:
    mine = _own_copy(tmp_path)
    added = add_model(mine, name="mine")
    assert added.folder == models_home() / "mine"
    record = json.loads((added.folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert record["source"] == str(mine.resolve())
    assert record["files"][0]["sha256"] == added.sha256
    assert record["files"][0]["size"] == mine.stat().st_size
    found = resolve_generator(GenerationConfig(model="mine"), Path("."))
    assert found.gguf.resolve() == mine.resolve()  # linked, not copied
    assert found.identity == f"mine:{added.sha256[:16]}"
    [row] = [r for r in list_generators(Config()) if r.name == "mine"]
    assert (row.source, row.sha256, row.present) == ("added", added.sha256, True)
    assert row.calibration.startswith("uncalibrated")


def test_a_file_changed_after_it_was_added_is_refused(tmp_path: Path) -> None:
    mine = _own_copy(tmp_path)
    add_model(mine, name="changing")
    with mine.open("r+b") as handle:  # same size, other bytes: only the hash can tell
        handle.seek(mine.stat().st_size // 2)
        handle.write(b"\xff" * 16)
    os.utime(mine, ns=(1, 1))
    with pytest.raises(ModelError) as raised:
        resolve_generator(GenerationConfig(model="changing"), Path("."))
    assert "expected sha256" in raised.value.message
    assert "changed since `rag models add`" in raised.value.hint


def test_copy_keeps_working_when_the_original_goes(tmp_path: Path) -> None:
    mine = _own_copy(tmp_path)
    added = add_model(mine, name="copied", copy=True)
    mine.unlink()
    assert resolve_generator(GenerationConfig(model="copied"), Path(".")).gguf == added.gguf
    assert not added.gguf.is_symlink()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/no/such/model.gguf"], "no such file"),
        (["{junk}"], "not a GGUF file"),
        (["{dir}"], "Is a directory"),
        (["{gguf}", "--name", "../escape"], "cannot name a model"),
        (["{gguf}", "--name", SMALL], "is a packaged model's name"),
    ],
)
def test_bad_input_is_a_one_line_error(tmp_path: Path, args: list[str], message: str) -> None:
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf at all")
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 32)
    filled = [a.format(junk=junk, dir=tmp_path, gguf=gguf) for a in args]
    done = rag("models", "add", *filled, cwd=tmp_path)
    assert done.returncode == 3
    assert message in assert_clean_error(done.stderr)
    assert not list(models_home().glob(".*.adding")), "a refused add left a half-made folder"
    assert not (tmp_path / "escape").exists()


def test_a_name_already_taken_is_refused(tmp_path: Path) -> None:
    mine = _own_copy(tmp_path)
    add_model(mine, name="twice")
    done = rag("models", "add", str(mine), "--name", "twice", cwd=tmp_path)
    assert done.returncode == 3
    assert "already exists" in assert_clean_error(done.stderr)
