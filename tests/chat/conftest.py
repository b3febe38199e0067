"""The chat tests' shared index: the test corpus, ingested once with the real embedder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from raggity.api import Raggity, load_config
from raggity.core.protocols import Embedder
from tests.isolation import isolated_state
from tests.support import write_config, write_corpus


@dataclass(frozen=True)
class Index:
    config: Path
    docs: dict[str, Path]
    embedder: Embedder


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, _state_dirs: dict[str, Path]) -> Index:
    root = tmp_path_factory.mktemp("chat")
    config = write_config(
        root,
        index={"path": str(root / "index")},
        ingest={"chunk_tokens": 64, "parent_tokens": 256},
        retrieval={"top_k": 2},
        generation={"threads": 1},
    )
    docs = write_corpus(root / "docs")
    with isolated_state(_state_dirs):
        session = Raggity(load_config(config))
        session.ingest([root / "docs"])
    return Index(config, docs, session.embedder)
