"""Real parts for the scale-out tests: an S3-compatible server (moto's server mode) and a local Ray
cluster, both on 127.0.0.1, both started once per session and stopped at its end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.isolation import isolated_state
from tests.s3_server import FAKE_CREDENTIALS, S3Server, _s3_server, s3

__all__ = ["FAKE_CREDENTIALS", "S3Server", "_s3_server", "ray_cluster", "s3"]


@pytest.fixture(scope="module", autouse=True)
def _module_state(_state_dirs: dict[str, Path]) -> Iterator[None]:
    """Module-scoped fixtures here (a reference index) run before the per-test isolation of
    tests/conftest.py: the same isolated state folders are exported for the whole module."""
    with isolated_state(_state_dirs):
        yield


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A two-CPU Ray cluster on this machine only: no dashboard, no usage report, loopback address."""
    worktree = str(Path(__file__).resolve().parents[2])
    patch = pytest.MonkeyPatch()
    patch.setenv("RAY_USAGE_STATS_ENABLED", "0")  # read by ray.init and the processes it starts
    # Ray's local-only mode: the loopback address without its probe towards 8.8.8.8 (which even
    # `_node_ip_address="127.0.0.1"` below triggers otherwise; raggity.pipeline.ingest.ray_local).
    patch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray  # noqa: PLC0415 - only the scale tests need it; after the settings Ray reads at import

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
