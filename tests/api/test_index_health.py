"""One health check of a local index (raggity.store.health) behind every command and `rag doctor`:
a damaged store is the same one line, exit 4, from search, ask, status and the MCP tools, and doctor
reports it in the same words instead of "ok"."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.mcp.server import ReadOnlyTools
from tests.support import assert_clean_error, ingested_corpus, rag, write_config

STATE_EXIT = 4


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, _state_dirs: dict[str, Path]) -> Path:
    root = tmp_path_factory.mktemp("health")
    ingested_corpus(root, _state_dirs)
    return root / "index"


def _empty_lancedb(index: Path) -> None:
    shutil.rmtree(index / "lancedb")
    (index / "lancedb").mkdir()


def _linked_lancedb(index: Path) -> None:
    elsewhere = index.parent / "elsewhere-lancedb"
    shutil.move(index / "lancedb", elsewhere)
    (index / "lancedb").symlink_to(elsewhere)


def _no_tantivy(index: Path) -> None:
    shutil.rmtree(index / "tantivy")
    (index / "tantivy").mkdir()


def _fifo_manifest(index: Path) -> None:
    (index / "manifest.json").unlink()
    os.mkfifo(index / "manifest.json")


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "emptied lancedb": (
        _empty_lancedb,
        "the manifest lists chunks, but its chunk table (lancedb/) is missing",
    ),
    "linked lancedb": (_linked_lancedb, "lancedb: is a symbolic link, inside the index folder"),
    # Before: `rag status` read the FIFO and never returned.
    "fifo manifest": (_fifo_manifest, "manifest.json: is not a regular file, inside the index folder"),
    "emptied tantivy": (
        _no_tantivy,
        "the manifest lists chunks, but its keyword index (tantivy/) is missing",
    ),
}


@pytest.mark.parametrize("damage", DAMAGE, ids=DAMAGE)
def test_every_command_and_doctor_tell_a_damaged_store_alike(
    built: Path, tmp_path: Path, damage: str
) -> None:
    """Before: an emptied lancedb/ gave "no results" with exit 0 (an emptied tantivy/ likewise for
    keyword hits), and doctor said "ok, stores agree" for a linked lancedb/ that every other command
    refused."""
    shutil.copytree(built, tmp_path / "index", symlinks=True)
    config = write_config(tmp_path, index={"path": str(tmp_path / "index")})
    hurt, expected = DAMAGE[damage]
    hurt(tmp_path / "index")
    env = dict(os.environ)
    for args in (["search", "dutch oven"], ["ask", "How long does the loaf bake?"], ["status"]):
        done = rag("--config", str(config), *args, cwd=tmp_path, env=env)
        assert done.returncode == STATE_EXIT, (args, done.stdout, done.stderr)
        assert expected in assert_clean_error(done.stderr), (args, done.stderr)
        assert "rag ingest --rebuild" in done.stderr

    doctor = rag("--config", str(config), "doctor", cwd=tmp_path, env=env)
    assert doctor.returncode != 0, doctor.stdout
    assert "stores agree" not in doctor.stdout
    [line] = [x for x in doctor.stdout.splitlines() if "index:" in x and expected in x]
    assert line.lstrip().startswith("FAIL"), doctor.stdout

    loaded = load_config(config)
    tools = ReadOnlyTools(Raggity(loaded), loaded)
    with pytest.raises(ToolError, match=expected.split(":")[-1].strip()[:30]):
        asyncio.run(tools.search("dutch oven", 3))


def test_a_healthy_index_passes_the_same_check_everywhere(built: Path, tmp_path: Path) -> None:
    shutil.copytree(built, tmp_path / "index")
    config = write_config(tmp_path, index={"path": str(tmp_path / "index")})
    done = rag("--config", str(config), "search", "dutch oven", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doctor = rag("--config", str(config), "doctor", cwd=tmp_path)
    assert "index stores: LanceDB, Tantivy and manifest agree" in doctor.stdout, doctor.stdout
