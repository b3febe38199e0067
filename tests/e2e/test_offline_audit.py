"""The commands that say they work offline (ingest, ask, chat, mcp) reach no host beyond 127.0.0.1:
each runs as the real `rag` script under the socket audit hook of tests/offline_audit.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.isolation import isolated_state
from tests.offline_audit import audit, offline_env
from tests.support import RAG, write_config, write_corpus

QUESTION = "How long does the bulk rise of a sourdough take?"
# Declined before any model call: `rag ask` loads and runs the generator under the audit; chat and the
# MCP server are audited for their own doors (the chat loop, the stdio transport) without a second
# model load each.
OFF_TOPIC = "What is the capital of Mongolia?"


def _run(args: list[str], cwd: Path, log: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        env=offline_env(log),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, _state_dirs: dict[str, Path]) -> tuple[Path, Path]:
    """A folder with a config and documents, ingested under the audit; (folder, the ingest's log)."""
    root = tmp_path_factory.mktemp("offline")
    write_config(root)
    write_corpus(root / "docs")
    log = root / "ingest.jsonl"
    with isolated_state(_state_dirs):
        result = _run([str(RAG), "ingest", "docs"], root, log)
    assert result.returncode == 0, result.stderr
    return root, log


def test_the_audit_sees_and_refuses_an_outside_connection_and_a_lookup_and_lets_loopback_through(
    tmp_path: Path,
) -> None:
    """Without this, a hook that never loaded would pass every test below."""
    log = tmp_path / "network.jsonl"
    script = (
        "import socket\n"
        "server = socket.create_server(('127.0.0.1', 0))\n"
        "socket.create_connection(server.getsockname()).close()\n"
        "for attempt in (lambda: socket.create_connection(('192.0.2.1', 9), timeout=1),\n"
        "                lambda: socket.socket().connect(('192.0.2.1', 9)),\n"
        "                lambda: socket.getaddrinfo('example.com', 443)):\n"
        "    try:\n"
        "        attempt()\n"
        "    except PermissionError as exc:\n"
        "        print('refused:', exc)\n"
    )
    result = _run([sys.executable, "-c", script], tmp_path, log)

    assert result.returncode == 0, result.stderr
    assert result.stdout.count("refused: offline audit") == 3
    record = audit(log)
    assert record.started("-c")
    assert [(a["event"], a["target"]) for a in record.attempts] == [
        ("socket.getaddrinfo", "192.0.2.1"),
        ("socket.connect", ["192.0.2.1", 9]),
        ("socket.getaddrinfo", "example.com"),
    ]


def test_ingest_reaches_no_host(project: tuple[Path, Path]) -> None:
    _, log = project
    record = audit(log)
    assert record.started(str(RAG), "ingest")
    assert record.attempts == ()


def test_ask_reaches_no_host(project: tuple[Path, Path]) -> None:
    root, _ = project
    log = root / "ask.jsonl"
    result = _run([str(RAG), "ask", QUESTION], root, log)
    assert result.returncode == 0, result.stderr
    record = audit(log)
    assert record.started(str(RAG), "ask")
    assert record.attempts == ()


def test_chat_reaches_no_host(project: tuple[Path, Path]) -> None:
    root, _ = project
    log = root / "chat.jsonl"
    result = _run([str(RAG), "chat", "--json"], root, log, stdin=f"{OFF_TOPIC}\n{OFF_TOPIC}\n")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 2
    record = audit(log)
    assert record.started(str(RAG), "chat")
    assert record.attempts == ()


def _request(request_id: int, method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n"


def test_mcp_reaches_no_host(project: tuple[Path, Path]) -> None:
    root, _ = project
    log = root / "mcp.jsonl"
    handshake = _request(
        1,
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    )
    handshake += json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
    calls = [
        (2, "search", {"query": "sourdough rise"}),
        (3, "ask", {"question": OFF_TOPIC}),
        (4, "status", {}),
    ]
    proc = subprocess.Popen(
        [str(RAG), "mcp"], cwd=root, env=offline_env(log), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        proc.stdin.write(
            handshake + "".join(_request(i, "tools/call", {"name": n, "arguments": a}) for i, n, a in calls)
        )
        proc.stdin.flush()
        answered: set[int] = set()
        while len(answered) < 1 + len(calls):
            line = proc.stdout.readline()
            assert line, proc.communicate(timeout=60)[1]
            reply = json.loads(line)
            assert "error" not in reply, reply
            answered.add(reply["id"])
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    record = audit(log)
    assert record.started(str(RAG), "mcp")
    assert record.attempts == ()
