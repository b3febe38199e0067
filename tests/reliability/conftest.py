"""Module-scoped fixtures here build indexes before the function-scoped state isolation of
tests/conftest.py runs, so the same isolated state folders are exported for the whole module.

`store`: the integrity tests run against every store behind the index seam, an index folder, an
index on an S3 server (moto, on 127.0.0.1) and one on Azure's emulator (Azurite, on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from raggity.config.schema import IndexConfig
from tests.azurite_server import AzuriteServer, _azurite_server, azurite
from tests.isolation import isolated_state
from tests.s3_server import S3Server, _s3_server, s3

__all__ = ["Store", "_azurite_server", "_s3_server", "azurite", "s3", "store"]


@pytest.fixture(scope="module", autouse=True)
def _module_state(_state_dirs: dict[str, Path]) -> Iterator[None]:
    with isolated_state(_state_dirs):
        yield


@dataclass(frozen=True)
class Store:
    name: str
    server: S3Server | AzuriteServer | None

    def index(self, folder: Path) -> IndexConfig:
        """A new, empty index: in `folder`, or under a fresh prefix on the store's server."""
        if self.server is None:
            return IndexConfig(path=str(folder))
        return IndexConfig(path=self.server.prefix(), storage=self.server.storage_options)


@pytest.fixture(params=["local", "s3", "azure"])
def store(request: pytest.FixtureRequest) -> Store:
    if request.param == "local":
        return Store("local", None)
    return Store(request.param, request.getfixturevalue({"s3": "s3", "azure": "azurite"}[request.param]))
