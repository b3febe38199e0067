"""An S3-compatible server (moto's server mode) on 127.0.0.1, started once per test session: the
object store that the scale tests and the store-parametrized reliability tests write an index to."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

# Fake credentials, only for the test server: set in the environment of the tests that use the store
# (and of the Ray workers), never in a config file, never passed as storage options.
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing-key-id",
    "AWS_SECRET_ACCESS_KEY": "testing-secret-key",
    "AWS_DEFAULT_REGION": "us-east-1",
    # boto3 must not read a developer's ~/.aws files, nor ask an instance metadata service.
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}
BUCKET = "raggity-test"


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    bucket: str

    @property
    def storage_options(self) -> dict[str, str]:
        """What `[index.storage]` would hold for this server: no credentials."""
        return {"endpoint": self.endpoint, "region": "us-east-1", "allow_http": "true"}

    def prefix(self) -> str:
        """A fresh s3:// prefix, so that tests sharing the server never see each other's objects."""
        return f"s3://{self.bucket}/{uuid.uuid4().hex[:12]}"

    def client(self) -> Any:
        import boto3  # noqa: PLC0415 - only the scale tests need it

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1")


@pytest.fixture(scope="session")
def _s3_server() -> Iterator[S3Server]:
    from moto.server import ThreadedMotoServer  # noqa: PLC0415 - only the scale tests need it

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        s3 = S3Server(f"http://{host}:{port}", BUCKET)
        with pytest.MonkeyPatch.context() as patch:
            for name, value in FAKE_CREDENTIALS.items():
                patch.setenv(name, value)
            s3.client().create_bucket(Bucket=BUCKET)
        yield s3
    finally:
        server.stop()


@pytest.fixture
def s3(_s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    """The S3 server, with the fake credentials in this test's environment (and its subprocesses')."""
    for name, value in FAKE_CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    return _s3_server
