"""The chat tests' shared index: the test corpus, ingested once with the real embedder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from raggity.core.protocols import Embedder
from tests.support import ingested_corpus


@dataclass(frozen=True)
class Index:
    config: Path
    docs: dict[str, Path]
    embedder: Embedder


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, _state_dirs: dict[str, Path]) -> Index:
    config, docs, session = ingested_corpus(
        tmp_path_factory.mktemp("chat"),
        _state_dirs,
        ingest={"chunk_tokens": 64, "parent_tokens": 256},
        retrieval={"top_k": 2},
        generation={"threads": 1},
    )
    return Index(config, docs, session.models.embedder)
