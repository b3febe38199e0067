"""Damaged index state and model files: a clear one-line error or a working fallback, never a
traceback, and a documented command that repairs it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from raggity.api.doctor import run_checks
from raggity.api.session import Models, Raggity
from raggity.config.loader import load_config
from raggity.config.schema import Config
from raggity.core.errors import ModelError
from raggity.models.hashing import HashCache, sha256_file
from raggity.store.layout import IndexLayout
from tests.reliability.helpers import QUERY, rag, read_state, write_corpus, write_rag_config
from tests.support import assert_clean_error


@pytest.fixture(scope="module")
def models() -> Models:
    shared = Models(Config())
    _ = shared.embedder, shared.tokenizer
    return shared


@pytest.fixture
def indexed(tmp_path: Path, models: Models) -> tuple[Path, IndexLayout]:
    config = write_rag_config(tmp_path)
    write_corpus(tmp_path / "docs", 5)
    session = Raggity(load_config(config), embedder=models.embedder, tokenizer=models.tokenizer)
    session.ingest()
    return config, IndexLayout(tmp_path / ".raggity")


def _assert_whole(layout: IndexLayout) -> None:
    state = read_state(layout.root)
    assert state.live_ids
    assert state.clean
    assert state.live_ids == state.table_ids == state.bm25_ids


def test_garbage_manifest(indexed: tuple[Path, IndexLayout]) -> None:
    config, layout = indexed
    layout.manifest.write_bytes(b"\x00\xff garbage {{{ \x9c")
    result = rag(config, "search", QUERY)
    assert result.returncode == 4
    assert "Traceback" not in result.stderr
    error = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1
    assert str(layout.manifest) in error[0]
    assert "rag ingest --rebuild" in result.stderr
    doctor = rag(config, "doctor")
    assert doctor.returncode == 1
    assert "rag ingest --rebuild" in doctor.stdout
    rebuilt = rag(config, "ingest", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    _assert_whole(layout)
    assert rag(config, "search", QUERY).returncode == 0


@pytest.mark.parametrize("store", ["tantivy", "lancedb", "lancedb-uncommitted"])
def test_deleted_store_folder(indexed: tuple[Path, IndexLayout], store: str) -> None:
    config, layout = indexed
    before = read_state(layout.root)
    shutil.rmtree(layout.root / store.split("-", maxsplit=1)[0])
    if store == "lancedb-uncommitted":  # a first table write killed before its commit
        (layout.table / "data").mkdir(parents=True)
    result = rag(config, "search", "--json", QUERY)
    assert "Traceback" not in result.stderr
    # One health check tells every command and doctor alike (store/health.py).
    assert result.returncode == 4, result.stderr
    [error] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    problem = error.removeprefix("error:").strip()
    assert store.split("-", maxsplit=1)[0] in problem
    doctor = rag(config, "doctor")
    assert doctor.returncode == 1
    assert problem in doctor.stdout
    assert "rag ingest" in doctor.stdout
    repaired = rag(config, "ingest")
    assert repaired.returncode == 0, repaired.stderr
    after = read_state(layout.root)
    assert after == before
    checks = run_checks(load_config(config))
    assert all(c.ok for c in checks if c.name.startswith("index")), checks


def test_hash_mismatch_names_the_file_and_the_fix(tmp_path: Path) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"pretend weights" * 100)
    cache = HashCache(tmp_path / "verified-hashes.json")
    good = sha256_file(model)
    cache.verify(model, good, "unused")
    model.write_bytes(b"tampered weights" * 100)
    with pytest.raises(ModelError) as caught:
        cache.verify(model, good, "run `rag models pull all-MiniLM-L6-v2`")
    assert str(model) in caught.value.message
    assert "mismatch" in caught.value.message
    assert caught.value.hint == "run `rag models pull all-MiniLM-L6-v2`"
    assert caught.value.exit_code == 3


def test_cached_digest_follows_size_and_mtime(tmp_path: Path) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"a" * 1000)
    cache = HashCache(tmp_path / "verified-hashes.json")
    first = cache.digest(model)
    # Same size, new bytes, new mtime: the cached digest must not be reused.
    model.write_bytes(b"b" * 1000)
    stat = model.stat()
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert cache.digest(model) == sha256_file(model) != first
    # Truncated: new size.
    model.write_bytes(b"b" * 10)
    assert cache.digest(model) == sha256_file(model)
    # A garbage cache file is ignored, not fatal.
    (tmp_path / "verified-hashes.json").write_bytes(b"\xff\x00not json")
    assert cache.digest(model) == sha256_file(model)


WRONG_SHAPES = {
    "a list": "[]",
    "sources a list": '{"sources": []}',
    "an entry a number": '{"sources": {"/x.md": 5}}',
    "chunk ids a string": '{"sources": {"/x.md": {"sha256": "0", "size": 1, "mtime_ns": 1, "chunk_ids": "ab"}}}',
    "fingerprint a string": '{"fingerprint": "x", "sources": {}}',
    "last ingest a string": '{"last_ingest": "yesterday", "sources": {}}',
}


@pytest.mark.parametrize("text", WRONG_SHAPES.values(), ids=WRONG_SHAPES.keys())
def test_a_manifest_of_the_wrong_shape_is_damaged_and_rebuild_fixes_it(
    indexed: tuple[Path, IndexLayout], text: str
) -> None:
    """Valid JSON of another shape crashed status, search and ingest with AttributeError (exit 70),
    and the documented fix, `rag ingest --rebuild`, as well."""
    config, layout = indexed
    layout.manifest.write_text(text, encoding="utf-8")
    for args in (["status"], ["search", QUERY], ["ingest"]):
        result = rag(config, *args)
        assert result.returncode == 4, (args, result.stderr)
        line = assert_clean_error(result.stderr)
        assert str(layout.manifest) in line
        assert "rag ingest --rebuild" in result.stderr
    rebuilt = rag(config, "ingest", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    _assert_whole(layout)
    assert rag(config, "search", QUERY).returncode == 0
