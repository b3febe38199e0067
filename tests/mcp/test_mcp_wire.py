"""`rag mcp`'s stdio wire, byte for byte: a malformed line gets a JSON-RPC error reply (where the SDK
alone answered nothing and the client waited for ever), `prompts/get` is one line with no traceback,
and hidden characters from documents reach the wire as \\u escapes, as `rag search --json` prints them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from raggity.mcp.wire import malformed
from tests.support import RAG, rag, write_config

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _call(request_id: int, name: str, arguments: dict[str, Any]) -> bytes:
    return _line(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    )


def serve(config: Path, lines: list[bytes], replies: int) -> tuple[list[bytes], str]:
    """Starts `rag mcp`, sends the handshake and `lines`, and reads until `replies` replies with an
    id or null id (besides initialize's) came back; the raw stdout lines and the whole stderr."""
    proc = subprocess.Popen(
        [str(RAG), "mcp", "--config", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdin.write(_line(INITIALIZE) + _line(INITIALIZED) + b"".join(lines))
    proc.stdin.flush()
    raw: list[bytes] = []
    answered = 0
    try:
        while answered < replies + 1:
            line = proc.stdout.readline()
            assert line, proc.stderr.read().decode("utf-8", "replace")
            raw.append(line)
            if "id" in json.loads(line):
                answered += 1
    finally:
        proc.stdin.close()
        rest = proc.stdout.read()
        stderr = proc.stderr.read().decode("utf-8", "replace")
        proc.wait(timeout=60)
    assert rest == b"", rest  # no reply beyond one per line
    return raw, stderr


def _by_id(raw: list[bytes]) -> dict[object, list[dict[str, Any]]]:
    found: dict[object, list[dict[str, Any]]] = {}
    for line in raw:
        message = json.loads(line)
        found.setdefault(message.get("id"), []).append(message)
    return found


@pytest.fixture
def no_index(tmp_path: Path) -> Path:
    return write_config(tmp_path, index={"path": str(tmp_path / "index")})


def test_malformed_requests_get_one_error_reply_each_and_the_server_keeps_serving(no_index: Path) -> None:
    """Before: no reply at all to each of these (the client waited for its id), and `prompts/get`
    was answered with code 0 and a traceback on stderr."""
    lines = [
        b"{not json\n",
        _line({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": [1, 2]}),
        _line({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": "all"}),
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"status","arguments":{}},"x":"\xff"}\n',
        b"\xff\xfe\xfd\n",
        _line({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "status\udce9"}}),
        b"[1, 2, 3]\n",
        _line({"jsonrpc": "2.0", "id": 7, "method": "prompts/get", "params": {"name": "nope"}}),
        _line({"jsonrpc": "2.0", "method": "notifications/whatever", "params": [1]}),  # a notification: none
        _call(8, "status", {}),
    ]
    raw, stderr = serve(no_index, lines, replies=9)
    by_id = _by_id(raw)
    codes = {key: [m["error"]["code"] for m in found if "error" in m] for key, found in by_id.items()}
    assert codes[None] == [-32700, -32700, -32600]  # not JSON, not UTF-8 (no id readable), an array
    assert codes[3] == [-32602]
    assert codes[4] == [-32602]
    assert codes[5] == [-32700]  # not UTF-8, but its id is readable: the client stops waiting
    assert codes[6] == [-32600]  # a lone surrogate: the SDK dropped it before any tool saw it
    assert codes[7] == [-32602]
    assert by_id[7][0]["error"]["message"] == "Unknown prompt: nope"
    [status] = by_id[8]
    assert json.loads(status["result"]["content"][0]["text"])["exists"] is False
    assert "Traceback" not in stderr, stderr
    assert stderr.strip() == "", stderr


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', None),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', None),
        (b'{"jsonrpc":"2.0","id":2,"method":"ping","params":null}', None),
        (b'{"jsonrpc":"2.0","id":2,"method":"ping","params":7}', (2, -32602)),
        (b'{"jsonrpc":"2.0","id":"a","method":7}', ("a", -32600)),
        (b'{"jsonrpc":"1.0","id":2,"method":"ping"}', (2, -32600)),
        (b"null", (None, -32600)),
        (b'"text"', (None, -32600)),
        (b"", (None, -32700)),
        (b"\xc3", (None, -32700)),
    ],
)
def test_malformed_classifies_a_line_as_json_rpc_2_does(
    line: bytes, expected: tuple[object, int] | None
) -> None:
    error = malformed(line)
    if expected is None:
        assert error is None
    else:
        assert error is not None
        assert (error.id, error.error.code) == expected


BIDI_DOC = "# Rollout\n\nThe rollout password is \u202ekcabllor\u202c and the \x1b[2J token expires daily.\n"


def test_hidden_characters_reach_the_wire_escaped_as_the_cli_json_prints_them(tmp_path: Path) -> None:
    """Before: the search result's text carried U+202E raw on the wire, where `rag search --json`
    writes \\u202e (the same string once parsed)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "rollout.md").write_text(BIDI_DOC, encoding="utf-8")
    config = write_config(tmp_path, index={"path": str(tmp_path / "index")})
    assert rag("--config", str(config), "ingest", "docs", cwd=tmp_path).returncode == 0
    cli = rag("--config", str(config), "search", "rollout password", "--json", cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr

    raw, stderr = serve(config, [_call(2, "search", {"query": "rollout password", "k": 1})], replies=1)
    [reply] = [line for line in raw if json.loads(line).get("id") == 2]
    for hidden in ("\u202e", "\u202c", "\x1b"):
        assert hidden.encode() not in reply
        assert hidden.encode() not in cli.stdout.encode()
    assert b"\\u202e" in reply
    assert "\\u202e" in cli.stdout
    [source] = json.loads(reply)["result"]["structuredContent"]["sources"]
    assert source["text"] == json.loads(cli.stdout)[0]["text"]
    assert "\u202ekcabllor\u202c" in source["text"]  # escaped on the wire, unchanged as data
    assert "Traceback" not in stderr
