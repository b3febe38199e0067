"""Module-scoped fixtures here build indexes before the function-scoped state isolation of
tests/conftest.py runs, so the same isolated state folders are exported for the whole module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.isolation import isolated_state


@pytest.fixture(scope="module", autouse=True)
def _module_state(_state_dirs: dict[str, Path]) -> Iterator[None]:
    with isolated_state(_state_dirs):
        yield
