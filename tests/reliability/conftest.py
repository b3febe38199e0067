"""Module-scoped fixtures here build indexes before the function-scoped state isolation of
tests/conftest.py runs, so the same isolated state folders are exported for the whole module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="module", autouse=True)
def _module_state(_state_dirs: dict[str, Path]) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        for name, path in _state_dirs.items():
            mp.setenv(name, str(path))
        for name in ("RAGGITY_CONFIG", "RAGGITY_DEBUG", "RAGGITY_KILL_AT", "RAGGITY_BATCH_CHUNKS"):
            mp.delenv(name, raising=False)
        yield
