"""The kill-point hook itself: name[:n] counting, and no effect when unset."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from raggity.core import faults

_SCRIPT = (
    "from raggity.core.faults import checkpoint\n"
    "checkpoint('embed:before'); checkpoint('other')\n"
    "checkpoint('embed:before'); print('alive', flush=True)\n"
    "checkpoint('embed:before'); print('survived', flush=True)\n"
)


def _run(kill_at: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != faults.ENV}
    if kill_at is not None:
        env[faults.ENV] = kill_at
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, check=False
    )


def test_parse() -> None:
    assert faults._parse("") is None
    assert faults._parse("read") == ("read", 1)
    assert faults._parse("embed:before") == ("embed:before", 1)
    assert faults._parse("embed:before:3") == ("embed:before", 3)
    assert faults._parse("atomic:before-rename:2") == ("atomic:before-rename", 2)


def test_kills_at_the_nth_time() -> None:
    result = _run("embed:before:3")
    assert result.returncode == -signal.SIGKILL
    assert result.stdout.split() == ["alive"]


def test_kills_at_the_first_time_by_default() -> None:
    result = _run("embed:before")
    assert result.returncode == -signal.SIGKILL
    assert result.stdout == ""


def test_unset_or_unreached_does_nothing() -> None:
    assert _run(None).stdout.split() == ["alive", "survived"]
    assert _run("embed:before:4").stdout.split() == ["alive", "survived"]
    faults.checkpoint("read")  # in this process the variable is unset
