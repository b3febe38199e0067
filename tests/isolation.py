"""The environment every test runs in: raggity's state folders under pytest's temporary folder, and
no setting inherited from the developer's shell. Written once, used by the fixtures that need it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

# Variables that would make a test depend on the shell it was started from.
INHERITED = ("RAGGITY_CONFIG", "RAGGITY_DEBUG", "RAGGITY_KILL_AT", "RAGGITY_BATCH_CHUNKS")


@contextmanager
def isolated_state(state_dirs: dict[str, Path]) -> Iterator[None]:
    """Points raggity's cache, data and models folders at `state_dirs` and clears INHERITED."""
    with pytest.MonkeyPatch.context() as patch:
        for name, path in state_dirs.items():
            patch.setenv(name, str(path))
        for name in INHERITED:
            patch.delenv(name, raising=False)
        yield
