"""Suite-wide guards: no network except loopback, and no state outside pytest's temporary folders."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.isolation import isolated_state


class NetworkBlockedError(RuntimeError):
    pass


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _allowed(address: Any) -> bool:
    if isinstance(address, str | bytes):  # AF_UNIX
        return True
    host = address[0] if isinstance(address, tuple) else address
    return host in ("127.0.0.1", "::1", "localhost")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if not _allowed(address):
        raise NetworkBlockedError(f"test tried to reach the network: {address!r}")
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if not _allowed(address):
        raise NetworkBlockedError(f"test tried to reach the network: {address!r}")
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hidden model download anywhere in the code fails the test that triggers it."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)


@pytest.fixture(scope="session")
def _state_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("raggity-state")
    return {
        # Shared by the whole session so the assembled GGUF and verified hashes are reused.
        "RAGGITY_CACHE_DIR": root / "cache",
        "XDG_DATA_HOME": root / "data",
        "RAGGITY_MODELS_DIR": root / "models",
    }


@pytest.fixture(autouse=True)
def _isolated_state(_state_dirs: dict[str, Path]) -> Iterator[None]:
    with isolated_state(_state_dirs):
        yield
