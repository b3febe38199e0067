"""Ray for `rag ingest --engine ray`: a cluster at an address, or a Ray started on this machine for the
ingest that opens no socket beyond the loopback address and says nothing on the terminal.

docs/scaling.md, "Ray on this machine", lists what a plain `ray.init()` of Ray 2.60 does that a tool
promising no network must not, and how each is turned off here: OFFLINE_ENV before Ray's first
import (no 8.8.8.8 probe, no usage statistics), HOME at a folder of this ingest holding a bootstrap
config that names the local provider (no cloud metadata lookup; the workers get the real HOME back),
and a token of this ingest's own (nothing written to ~/.ray). Ray's output goes to `ray-driver.log`
in that folder: a failure reaches the user as raggity's one line (ray_rows.ray_failure).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from raggity.core.extras import require

# Environment of a Ray of raggity's own, set before Ray is imported (see the module's docstring).
OFFLINE_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    # The embedding actors' onnxruntime (raggity.inference.onnx_session sets it too, before its import).
    "ORT_DISABLE_TELEMETRY": "1",
}
BOOTSTRAP = "ray_bootstrap_config.yaml"
DRIVER_LOG = "ray-driver.log"
_SOCKET_DEPTH = 84  # /raggity-ray-XXXXXXXX/session_<date>_<time>_<pid>/sockets/plasma_store
_SOCKET_PATH_MAX = 107
_LOGGERS = ("ray", "ray.data", "ray.train", "lance_ray")


def connect(address: str | None, *, cpus: int | None = None) -> Any:
    """Ray, connected: to `address` ("auto", "ray://host:10001", host:port), to $RAY_ADDRESS, or to a
    Ray started on this machine for this ingest (with `cpus` CPUs; None: the machine's); a Ray
    already connected in this process is used."""
    warnings.filterwarnings("ignore", message="lance is not fork-safe")
    target = address or os.environ.get("RAY_ADDRESS") or None
    local = target is None and not _connected()
    folder = _ray_folder() if local else None
    if folder is not None:
        # Read when Ray is imported and by every process it starts: set before the first import.
        os.environ.update(OFFLINE_ENV)
        _own_token(folder / "auth_token")
    ray = require("ray")
    require("lance_ray")
    _no_auto_init()
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    context.enable_auto_log_stats = False
    # After ray.data's import, which installs its own warning filters: max_restarts (ray_engine.py)
    # has no named parameter in this Ray yet.
    warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
    if ray.is_initialized():
        return ray
    quiet = {"log_to_driver": False, "logging_level": logging.ERROR, "configure_logging": False}
    log = (folder or _ray_folder()) / DRIVER_LOG
    route_logs(log)
    if folder is None:
        ray.init(address=target, **quiet)
    else:
        # The workers run with the real HOME (where boto3 and Lance find ~/.aws, for one).
        home = {"HOME": os.environ["HOME"]} if "HOME" in os.environ else {}
        workers = {"env_vars": {**OFFLINE_ENV, **home}}
        with _home_for_ray(folder / "home"):
            ray.init(
                num_cpus=cpus,
                include_dashboard=False,
                _node_ip_address="127.0.0.1",
                _temp_dir=str(folder),
                runtime_env=workers,
                **quiet,
            )
    route_logs(log)  # again: ray.init takes the handlers off Ray's loggers
    logging.getLogger("ray").info(
        "raggity: Ray %s, node address %s, logs in %s",
        "on this machine" if folder is not None else f"at {target}",
        ray.util.get_node_ip_address(),
        log.parent,
    )
    _silence_published_errors()
    return ray


def _ray_folder() -> Path:
    """A new private folder for this ingest's Ray (its sessions, logs, token), in the temporary
    folder unless that path is too long: Ray puts Unix sockets below it, about 84 characters
    further down, and a socket's path may not exceed 107 bytes."""
    base = tempfile.gettempdir()
    if len(base) + _SOCKET_DEPTH > _SOCKET_PATH_MAX and os.path.isdir("/tmp"):
        base = "/tmp"
    return Path(tempfile.mkdtemp(prefix="raggity-ray-", dir=base))


def _connected() -> bool:
    ray = sys.modules.get("ray")
    return ray is not None and bool(ray.is_initialized())


def route_logs(path: Path) -> None:
    """Ray's and lance-ray's loggers write to `path` only (Ray Data logs a failed task's traceback
    at ERROR, which Python's last-resort handler would print on the terminal)."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        # Ray's import gives its logger a handler of its own, on stderr: replaced, not added to.
        for old in list(logger.handlers):
            logger.removeHandler(old)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def _own_token(path: Path) -> None:
    """Ray's token authentication (on by default: no other local user may run code on this Ray
    through its ports) with a token of this ingest, in its own folder, named in the environment
    every Ray process inherits: Ray would otherwise write ~/.ray/auth_token and warn on the
    terminal that it did."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as out:
        out.write(secrets.token_hex(16))
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ["RAY_AUTH_TOKEN_PATH"] = str(path)


@contextlib.contextmanager
def _home_for_ray(home: Path) -> Iterator[None]:
    """HOME is `home` (holding a bootstrap config that names the local provider) while Ray starts its
    processes, and the real one again afterwards."""
    home.mkdir()
    (home / BOOTSTRAP).write_text("provider:\n  type: local\n", encoding="utf-8")
    real = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        yield
    finally:
        if real is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = real


def _silence_published_errors() -> None:
    """The cluster publishes a dead worker's error ("A worker died or was killed ...") to the driver,
    which prints it with a "(raylet)" prefix on stdout. Ray has no public switch for it; its own
    debugger turns this module flag off the same way while it holds the terminal."""
    module = sys.modules.get("ray._private.worker")
    if module is not None and hasattr(module, "_worker_logs_enabled"):
        setattr(module, "_worker_logs_enabled", False)  # noqa: B010 - a private flag ray's stubs do not declare


def _no_auto_init() -> None:
    """A Ray call made in this process after Ray shut down fails instead of starting a new Ray with
    default settings: Ray Data's executor did, in a driver Ctrl-C had stopped (ray_rows.py). Ray reads
    RAY_ENABLE_AUTO_CONNECT into this module flag once, at its import, and has no public switch
    after it; the variable itself would reach every process this one starts."""
    module = sys.modules.get("ray._private.auto_init_hook")
    if module is not None and hasattr(module, "enable_auto_connect"):
        setattr(module, "enable_auto_connect", False)  # noqa: B010 - a private flag ray's stubs do not declare
