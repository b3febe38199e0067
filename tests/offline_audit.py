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
urllib, http.client, asyncio and the MCP SDK all go); native code that opens its own sockets is not
seen by it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
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
