"""Real parts for the scale-out tests: an S3-compatible server (moto's server mode) and a local Ray
cluster, both on 127.0.0.1, both started once per session and stopped at its end."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.isolation import isolated_state

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


@pytest.fixture(scope="module", autouse=True)
def _module_state(_state_dirs: dict[str, Path]) -> Iterator[None]:
    """Module-scoped fixtures here (a reference index) run before the per-test isolation of
    tests/conftest.py: the same isolated state folders are exported for the whole module."""
    with isolated_state(_state_dirs):
        yield


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


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A two-CPU Ray cluster on this machine only: no dashboard, no usage report, loopback address."""
    import ray  # noqa: PLC0415 - only the scale tests need it

    worktree = str(Path(__file__).resolve().parents[2])
    patch = pytest.MonkeyPatch()
    patch.setenv("RAY_USAGE_STATS_ENABLED", "0")  # read by ray.init and the processes it starts
    try:
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            # Ray finds its own address by opening a socket towards a public IP: name it instead.
            _node_ip_address="127.0.0.1",
            object_store_memory=128 * 1024 * 1024,
            _temp_dir=str(tmp_path_factory.mktemp("ray")),
            log_to_driver=False,
            configure_logging=False,
            runtime_env={
                "env_vars": {**FAKE_CREDENTIALS, "PYTHONPATH": worktree, "RAY_USAGE_STATS_ENABLED": "0"}
            },
        )
        yield
    finally:
        ray.shutdown()
        patch.undo()
