"""The commands that say they work offline (ingest, ask, chat, mcp) reach no host beyond 127.0.0.1:
each runs as the real `rag` script under the socket audit hook of tests/offline_audit.py, and under
strace where it can trace, for what native code does outside Python's socket module."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.isolation import isolated_state
from tests.offline_audit import audit, native_attempts, offline_env, traced, tracer
from tests.support import RAG, write_config, write_corpus

QUESTION = "How long does the bulk rise of a sourdough take?"
# Declined before any model call: `rag ask` loads and runs the generator under the audit; chat and the
# MCP server are audited for their own doors (the chat loop, the stdio transport) without a second
# model load each.
OFF_TOPIC = "What is the capital of Mongolia?"


def _run(args: list[str], cwd: Path, log: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`args` under the audit hook (log: `log`) and, where strace runs, under it (`log` + ".strace")."""
    return subprocess.run(
        traced(args, _trace(log)),
        cwd=cwd,
        env=offline_env(log),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _trace(log: Path) -> Path:
    return log.with_suffix(".strace")


def _assert_offline(log: Path, *command: str) -> None:
    record = audit(log)
    assert record.started(str(RAG), *command), record.processes
    assert record.attempts == ()
    assert _trace(log).exists() == (tracer() is not None)  # traced wherever strace runs
    assert native_attempts(_trace(log)) == []


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
    _assert_offline(log, "ingest")


def test_ask_reaches_no_host(project: tuple[Path, Path]) -> None:
    root, _ = project
    log = root / "ask.jsonl"
    result = _run([str(RAG), "ask", QUESTION], root, log)
    assert result.returncode == 0, result.stderr
    _assert_offline(log, "ask")


def test_chat_reaches_no_host(project: tuple[Path, Path]) -> None:
    root, _ = project
    log = root / "chat.jsonl"
    result = _run([str(RAG), "chat", "--json"], root, log, stdin=f"{OFF_TOPIC}\n{OFF_TOPIC}\n")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 2
    _assert_offline(log, "chat")


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
        traced([str(RAG), "mcp"], _trace(log)), cwd=root, env=offline_env(log), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
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
    _assert_offline(log, "mcp")


def test_strace_sees_a_native_connection_and_a_dns_query_and_lets_loopback_through(tmp_path: Path) -> None:
    """Native code bypasses the hook: bash opens /dev/tcp itself. TEST-NET-1 (192.0.2.1, RFC 5737)
    is never a real host."""
    trace = tmp_path / "native.strace"
    script = "exec 3<>/dev/tcp/127.0.0.1/9; exec 3<>/dev/tcp/192.0.2.1/9"
    subprocess.run(traced(["timeout", "5", "bash", "-c", script], trace), capture_output=True, check=False)
    if tracer() is None:  # no strace here: the command ran as it was, and nothing is claimed of it
        assert native_attempts(trace) == []
        return
    [line] = native_attempts(trace)
    assert '"192.0.2.1"' in line
    assert "htons(9)" in line
    stub = tmp_path / "stub.strace"
    stub.write_text(
        '7 sendto(5, "x", 1, 0, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("127.0.0.53")}, 16) = 1\n'
        '7 connect(5, {sa_family=AF_INET6, sin6_port=htons(80), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", '
        "&sin6_addr), sin6_scope_id=0}, 28) = 0\n",
        encoding="utf-8",
    )
    assert [line.split()[1].split("(")[0] for line in native_attempts(stub)] == [
        "sendto"
    ]  # DNS, even to a stub
