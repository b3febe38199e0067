"""The offline audit, in every Python process started with this folder first on PYTHONPATH and
RAGGITY_OFFLINE_AUDIT naming a log file (see tests/offline_audit.py).

Python imports `sitecustomize` at start-up, before the program runs, so the hook is in place in the
`rag` process and in any Python process it starts (a Ray worker, a subprocess) that inherits the
environment. Each attempt to reach a host other than loopback is written to the log as one JSON line
and refused (PermissionError), so that even a failing test sends nothing off the machine. Only what
passes through Python's socket module is seen: native code that opens sockets itself is not.
"""

from __future__ import annotations

import ipaddress
import json
import os
import sys
from typing import Any

_LOG = os.environ.get("RAGGITY_OFFLINE_AUDIT", "")
# Events that take a peer address as their second argument, and those that name a host first.
_PEER = frozenset({"socket.connect", "socket.sendto", "socket.sendmsg", "socket.bind"})
_HOST = frozenset(
    {"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr"}
)
_OTHER = frozenset({"socket.getnameinfo", "urllib.Request", "http.client.connect"})
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def _write(record: dict[str, Any]) -> None:
    fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (json.dumps(record, default=repr) + "\n").encode())
    finally:
        os.close(fd)


def _local(host: object) -> bool:
    """Loopback, or no host at all (a Unix socket's path, getaddrinfo(None, ...) for a local bind)."""
    if host is None:
        return True
    name = host.decode() if isinstance(host, bytes) else str(host)
    if name.lower() in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.split("%")[0]).is_loopback
    except ValueError:
        return False


def _target(event: str, args: tuple[Any, ...]) -> object | None:
    """What `event` would reach beyond loopback, or None."""
    if event in _PEER:
        address = args[1]
        if not isinstance(address, tuple) or not address:
            return None  # AF_UNIX (a path) or another family that is not the network
        return None if _local(address[0]) else address
    if event in _HOST:
        return None if _local(args[0]) else args[0]
    if event == "socket.getnameinfo":
        return None if _local(args[0][0]) else args[0]
    if event == "urllib.Request":
        from urllib.parse import urlsplit  # noqa: PLC0415 - only when a request is made

        return None if _local(urlsplit(args[0]).hostname) else args[0]
    return None if _local(args[1]) else args[1]  # http.client.connect(self, host, port)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event not in _PEER and event not in _HOST and event not in _OTHER:
        return
    target = _target(event, args)
    if target is None:
        return
    _write({"pid": os.getpid(), "argv": sys.argv, "event": event, "target": target})
    raise PermissionError(f"offline audit: {event} to {target!r} refused")


if _LOG:
    _write({"pid": os.getpid(), "argv": sys.argv, "event": "started"})
    sys.addaudithook(_hook)
