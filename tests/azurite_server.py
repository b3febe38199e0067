"""Azurite's Blob service (the npm package, installed by `make install` into .tools/) on 127.0.0.1 at a
free port, started once per test session: the Azure store that the az:// tests write an index to."""

from __future__ import annotations

import os
import re
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

AZURITE = Path(__file__).resolve().parents[1] / ".tools" / "node_modules" / ".bin" / "azurite-blob"
ACCOUNT = "devstoreaccount1"
# Azurite's well-known development key (published in Azure's documentation, not a secret): set in
# the environment of the tests that use the store, as a user's real key would be, never in a config.
FAKE_CREDENTIALS = {
    "AZURE_STORAGE_ACCOUNT_KEY": (
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
    ),
}
CONTAINER = "raggity-test"
# --skipApiVersionCheck: the Python SDK may speak a newer service version than this Azurite.
_ARGUMENTS = [str(AZURITE), "--blobHost", "127.0.0.1", "--blobPort", "0", "--inMemoryPersistence"]
_ARGUMENTS += ["--skipApiVersionCheck", "--disableProductStyleUrl"]
_LISTENING = re.compile(r"listens on (http://127\.0\.0\.1:\d+)")


@dataclass(frozen=True)
class AzuriteServer:
    endpoint: str  # the account's blob endpoint: http://127.0.0.1:PORT/devstoreaccount1
    container: str

    @property
    def storage_options(self) -> dict[str, str]:
        """What `[index.storage]` would hold for Azurite: no credentials."""
        return {"account_name": ACCOUNT, "endpoint": self.endpoint, "allow_http": "true"}

    def prefix(self) -> str:
        """A fresh az:// prefix, so that tests sharing the server never see each other's objects."""
        return f"az://{self.container}/{uuid.uuid4().hex[:12]}"

    def service(self) -> Any:
        from azure.storage.blob import BlobServiceClient  # noqa: PLC0415 - only these tests need it

        key = FAKE_CREDENTIALS["AZURE_STORAGE_ACCOUNT_KEY"]
        return BlobServiceClient(self.endpoint, credential={"account_name": ACCOUNT, "account_key": key})


@pytest.fixture(scope="session")
def _azurite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AzuriteServer]:
    if not AZURITE.exists():
        pytest.fail(f"{AZURITE} is missing: run `make install` (it installs Azurite with npm)")
    work = tmp_path_factory.mktemp("azurite")
    log = work / "azurite.log"
    # Its console (the bound port, then an access line per request) goes to a file: a pipe that
    # nobody reads after the port would fill up and stall the server mid-suite.
    with log.open("w") as console:
        process = subprocess.Popen(
            [*_ARGUMENTS, "--debug", os.devnull], cwd=work, stdout=console, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 60
        while not (found := _LISTENING.search(log.read_text(errors="replace"))):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"Azurite did not start: {log.read_text(errors='replace')[-500:]}")
            time.sleep(0.1)
        url = found.group(1)
        server = AzuriteServer(f"{url}/{ACCOUNT}", CONTAINER)
        server.service().create_container(CONTAINER)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def azurite(_azurite_server: AzuriteServer, monkeypatch: pytest.MonkeyPatch) -> AzuriteServer:
    """Azurite, with its development key in this test's environment (and its subprocesses')."""
    for name, value in FAKE_CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    return _azurite_server
