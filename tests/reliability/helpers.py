"""Helpers for the reliability tests: a small corpus, the `rag` console script, index state."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import tantivy

from raggity.api.session import Raggity
from raggity.core.errors import IndexStateError
from raggity.store.bm25_index import Bm25Reader
from raggity.store.layout import IndexLayout
from raggity.store.manifest import load_manifest
from raggity.store.vector_table import VectorTableReader
from tests.support import write_config

RAG = Path(sys.executable).parent / "rag"
QUERY = "copper violin harbor lantern"
_WORDS = (
    "alpha beta gamma delta river mountain quartz copper violin harbor lantern meadow engine signal "
    "orbit canyon glacier thunder pepper maple falcon granite saffron comet willow"
).split()


def paragraph(seed: str, words: int = 25) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(_WORDS) for _ in range(words)) + "."


def file_text(name: str, paragraphs: int) -> str:
    body = "\n\n".join(paragraph(f"{name}-{i}") for i in range(paragraphs))
    return f"# Notes on {name}\n\n{body}\n"


def write_corpus(folder: Path, count: int = 12) -> list[Path]:
    """`count` small .md/.txt files; some hold one chunk, some several (at chunk_tokens = 32)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = folder / f"note{i:02d}.{'md' if i % 2 else 'txt'}"
        path.write_text(file_text(path.stem, 1 + (i % 3) * 2), encoding="utf-8")
        paths.append(path)
    return paths


def write_rag_config(folder: Path) -> Path:
    """folder/raggity.toml indexing folder/docs into folder/.raggity with small chunks."""
    return write_config(folder, ingest={"paths": ["docs"], "chunk_tokens": 32, "parent_tokens": 64})


def rag(
    config: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "RAGGITY_KILL_AT"}
    full_env.update(env or {})
    return subprocess.run(
        [str(RAG), *args, "--config", str(config)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )


def rag_popen(config: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "RAGGITY_KILL_AT"}
    full_env.update(env or {})
    return subprocess.Popen(
        [str(RAG), *args, "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
    )


@dataclass(frozen=True)
class IndexState:
    table_ids: frozenset[str]
    bm25_ids: frozenset[str]
    live_ids: frozenset[str]
    table_rows: int
    bm25_docs: int

    @property
    def clean(self) -> bool:
        return self.table_rows == len(self.table_ids) and self.bm25_docs == len(self.bm25_ids)


def read_state(root: Path) -> IndexState:
    layout = IndexLayout(root)
    table = VectorTableReader(layout.table).all_ids()
    bm25_docs = (
        tantivy.Index.open(str(layout.tantivy)).searcher().num_docs
        if (layout.tantivy / "meta.json").exists()
        else 0
    )
    return IndexState(
        table_ids=frozenset(table),
        bm25_ids=frozenset(Bm25Reader(layout.tantivy).all_ids()),
        live_ids=frozenset(load_manifest(layout.manifest).live_ids()),
        table_rows=len(table),
        bm25_docs=bm25_docs,
    )


def check_search_after_kill(session: Raggity) -> int:
    """A search answers from committed rows only; returns the number of results.

    In-process (the same code as `rag search`, without 2 s of interpreter start per kill case);
    test_concurrency and test_bad_state run the `rag search` console script itself.
    """
    layout = session.layout
    if not layout.manifest.exists():  # killed before the first manifest was committed
        with pytest.raises(IndexStateError, match="no index yet"):
            session.search(QUERY, k=50)
        return 0
    found = [{"id": c.chunk.id, "text": c.chunk.text} for c in session.search(QUERY, k=50).candidates]
    ids = [r["id"] for r in found]
    assert len(ids) == len(set(ids)), f"duplicate chunk ids in results: {ids}"
    live = load_manifest(layout.manifest).live_ids()
    table = set(VectorTableReader(layout.table).all_ids())
    # The write order's invariant: whatever the manifest lists is in both stores.
    missing = live - (table & Bm25Reader(layout.tantivy).all_ids())
    assert not missing, f"{len(missing)} listed chunks missing from the stores"
    assert set(ids) <= live, f"results not listed in the manifest: {set(ids) - live}"
    assert set(ids) <= table, f"results missing from LanceDB: {set(ids) - table}"
    assert all(r["text"].strip() for r in found)
    return len(ids)
