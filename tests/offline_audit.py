"""Checks that a command which says it works offline reaches no host beyond loopback.

`offline_env(log)` is the environment for a child process with the audit hook of
tests/offline_site/sitecustomize.py in place: every Python process that inherits it (the `rag`
process, a Ray worker, a subprocess) writes a "started" line to `log`, and a line for each attempt to
connect, send, bind or look up a name beyond loopback, which it refuses. `audit(log)` reads the log
back. A test asserts that its command's process started under the hook (else the check proves
nothing) and that no attempt was recorded:

    log = tmp_path / "network.jsonl"
    result = subprocess.run([str(RAG), "ingest", "docs"], env=offline_env(log), ...)
    record = audit(log)
    assert record.started("ingest")
    assert record.attempts == [], record.attempts

The hook sees what passes through Python's socket module (which is where Ray's address probe,
urllib, http.client, asyncio and the MCP SDK all go). Native code that opens its own sockets (a C++
library's telemetry thread, libc's resolver) is seen by strace where it is installed and may trace:
`traced(command, trace)` runs the command under it, and `native_attempts(trace)` lists each connect,
send or bind to an address beyond loopback, and each DNS query (port 53, even to a local stub
resolver, which would forward it). Where strace cannot run, `traced` returns the command as it is
and `native_attempts` finds nothing: the hook's check still holds.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tests.support import this_checkout

SITE = Path(__file__).resolve().parent / "offline_site"
AUDIT_LOG = "RAGGITY_OFFLINE_AUDIT"


def offline_env(log: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) with this checkout and the audit's site folder first on
    PYTHONPATH, and the audit writing to `log`."""
    base = this_checkout(dict(os.environ) if env is None else env)
    path = os.pathsep.join([str(SITE), base["PYTHONPATH"]])
    return {**base, "PYTHONPATH": path, AUDIT_LOG: str(log)}


@dataclass(frozen=True)
class Audit:
    """What the hook recorded: the processes it ran in, and the refused attempts."""

    processes: tuple[tuple[str, ...], ...]
    attempts: tuple[dict[str, Any], ...]

    def started(self, *argv_words: str) -> bool:
        """Whether a process whose command line holds all of `argv_words` ran under the hook."""
        return any(all(word in argv for word in argv_words) for argv in self.processes)


def audit(log: Path) -> Audit:
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    records = [json.loads(line) for line in lines]
    processes = tuple(tuple(r["argv"]) for r in records if r["event"] == "started")
    return Audit(processes, tuple(r for r in records if r["event"] != "started"))


_SYSCALLS = "connect,sendto,sendmsg,sendmmsg,bind"
# An IPv4 or IPv6 socket address as strace prints it: the port, then the address.
_ADDRESS = re.compile(
    r'sin6?_port=htons\((\d+)\).*?(?:inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)")'
)


@cache
def tracer() -> tuple[str, ...] | None:
    """The strace command line that works here (with its seccomp filter when it has one), or None
    where strace is missing or may not trace (a container without ptrace)."""
    found = shutil.which("strace")
    if found is None:
        return None
    for extra in (("--seccomp-bpf",), ()):
        command = (found, "-f", "-qq", *extra, "-e", f"trace={_SYSCALLS}")
        probe = subprocess.run([*command, "-o", os.devnull, "true"], capture_output=True, check=False)
        if probe.returncode == 0:
            return command
    return None


def traced(command: list[str], trace: Path) -> list[str]:
    """`command` under strace writing to `trace`, where strace can run; else `command` as it is."""
    prefix = tracer()
    return command if prefix is None else [*prefix, "-o", str(trace), *command]


def native_attempts(trace: Path) -> list[str]:
    """The traced system calls that reach beyond loopback or ask DNS, as strace printed them."""
    if not trace.exists():
        return []
    found = []
    for line in trace.read_text(encoding="utf-8", errors="replace").splitlines():
        for port, v4, v6 in _ADDRESS.findall(line):
            address = ipaddress.ip_address(v4 or v6)
            mapped = getattr(address, "ipv4_mapped", None)
            if port == "53" or not (mapped or address).is_loopback:
                found.append(line)
                break
    return found
