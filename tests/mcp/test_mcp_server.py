"""`rag mcp` end to end: the SDK's own stdio client against a real index, SmolLM2 for ask."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from tests.support import RAG, ingested_corpus, write_config

Client = Callable[[ClientSession], Awaitable[None]]


@dataclass(frozen=True)
class Index:
    config: Path
    root: Path
    docs: dict[str, Path]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, _state_dirs: dict[str, Path]) -> Index:
    root = tmp_path_factory.mktemp("mcp")
    config, docs, _ = ingested_corpus(
        root,
        _state_dirs,
        ingest={"chunk_tokens": 64, "parent_tokens": 256},
        retrieval={"top_k": 3},
        generation={"threads": 1},
    )
    return Index(config, root / "index", docs)


def run_client(config: Path, body: Client) -> None:
    """Starts `rag mcp --config CONFIG` the way an agent does and runs `body` in one client session."""
    server = StdioServerParameters(
        command=str(RAG), args=["mcp", "--config", str(config)], env=dict(os.environ)
    )

    async def main() -> None:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await body(session)

    anyio.run(main)


def payload(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    [block] = result.content
    assert isinstance(block, TextContent)
    data: dict[str, Any] = json.loads(block.text)
    return data


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    return " ".join(b.text for b in result.content if isinstance(b, TextContent))


def tree(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under `folder` with its size and mtime: equal before and after means nothing was written."""
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_search_ask_and_status_over_a_real_client_session_leave_the_index_untouched(index: Index) -> None:
    before = tree(index.root)
    seen: dict[str, Any] = {}

    async def body(session: ClientSession) -> None:
        listed = await session.list_tools()
        seen["tools"] = sorted(t.name for t in listed.tools)
        seen["status"] = payload(await session.call_tool("status", {}))
        seen["search"] = payload(
            await session.call_tool("search", {"query": "erupting volcanoes on Io", "k": 2})
        )
        seen["ask"] = payload(
            await session.call_tool("ask", {"question": "Which moon has erupting volcanoes?"})
        )
        seen["decline"] = payload(
            await session.call_tool("ask", {"question": "What is the boiling point of liquid nitrogen?"})
        )

    run_client(index.config, body)

    assert seen["tools"] == ["ask", "search", "status"]
    assert seen["status"]["exists"] is True
    assert seen["status"]["files"] == len(index.docs)
    assert seen["status"]["chunks"] >= len(index.docs)
    assert Path(seen["status"]["index"]) == index.root.resolve()

    sources = seen["search"]["sources"]
    assert len(sources) == 2
    assert sources[0]["source"] == str(index.docs["rst"])
    assert "volcanoes" in sources[0]["text"]
    assert sources[0]["location"].startswith("line")
    assert sources[0]["score"] >= sources[1]["score"]

    answer = seen["ask"]
    assert answer["answer"].strip()
    # The model's judgement let it answer; the 135M model's reply may have no source, and is then
    # declined with the reply kept aside. Whatever it cites must be an indexed file.
    assert answer["declined"] is bool(answer["unsupported_reply"])
    assert answer["verified"] is not answer["declined"]
    assert {c["source"] for c in answer["citations"]} <= {str(p) for p in index.docs.values()}
    assert all(isinstance(c["supported"], bool) for c in answer["citations"])

    assert seen["decline"]["declined"] is True
    assert seen["decline"]["citations"] == []

    # No ingest, no answer cache, no lock: the server opened nothing for writing.
    assert tree(index.root) == before


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(index: Index) -> None:
    seen: dict[str, Any] = {}

    async def body(session: ClientSession) -> None:
        seen["empty"] = error_text(await session.call_tool("search", {"query": "  "}))
        seen["k0"] = error_text(await session.call_tool("search", {"query": "sourdough", "k": 0}))
        seen["k_text"] = error_text(await session.call_tool("search", {"query": "sourdough", "k": "x"}))
        seen["no_question"] = error_text(await session.call_tool("ask", {"question": ""}))
        seen["after"] = payload(await session.call_tool("search", {"query": "sourdough starter", "k": 1}))

    run_client(index.config, body)

    assert "query is empty" in seen["empty"]
    # One line saying what to pass, not a validation report.
    assert "k is 0: pass a whole number of passages from 1 to 50" in seen["k0"]
    assert "k is 'x': pass a whole number" in seen["k_text"]
    assert "\n" not in seen["k0"] + seen["k_text"]
    assert "question is empty" in seen["no_question"]
    assert seen["after"]["sources"][0]["source"] == str(index.docs["text"])


def test_arguments_of_the_wrong_type_are_one_line_errors(index: Index) -> None:
    seen: dict[str, str] = {}

    async def body(session: ClientSession) -> None:
        seen["number"] = error_text(await session.call_tool("search", {"query": 123}))
        seen["missing"] = error_text(await session.call_tool("search", {"k": 2}))
        seen["null"] = error_text(await session.call_tool("ask", {"question": None}))
        seen["list"] = error_text(await session.call_tool("ask", {"question": ["\x1b[2J", "b"]}))
        seen["long"] = error_text(await session.call_tool("ask", {"question": {"a": "x" * 500}}))
        seen["tool"] = error_text(await session.call_tool("\x1b[2J\u202e", {}))

    run_client(index.config, body)

    assert (
        seen["number"]
        == "Error executing tool search: query is 123: pass the words or question to look for, as text"
    )
    assert seen["missing"] == (
        "Error executing tool search: query is missing: pass the words or question to look for, as text"
    )
    assert seen["null"] == "Error executing tool ask: question is None: pass the question to answer, as text"
    assert seen["list"].startswith("Error executing tool ask: question is ['\\x1b[2J', 'b']: pass")
    assert "question is {'a': 'xxxxxxxxxxxxxxx" in seen["long"]
    assert len(seen["long"]) < 150
    # A name the caller sent is quoted with its controls as escapes: an agent may print the error.
    assert seen["tool"] == "Unknown tool: \\x1b[2J<U+202E>"
    for text in seen.values():
        assert "\n" not in text, text
        assert "pydantic" not in text, text
        assert "http" not in text, text
        assert "\x1b" not in text


def test_no_index_yet_is_a_tool_error_and_creates_nothing(tmp_path: Path) -> None:
    config = write_config(tmp_path, index={"path": str(tmp_path / "index")})
    seen: dict[str, Any] = {}

    async def body(session: ClientSession) -> None:
        seen["search"] = error_text(await session.call_tool("search", {"query": "anything"}))
        seen["ask"] = error_text(await session.call_tool("ask", {"question": "anything?"}))
        seen["status"] = payload(await session.call_tool("status", {}))

    run_client(config, body)

    assert "no index yet" in seen["search"]
    assert "rag ingest" in seen["search"]
    assert "no index yet" in seen["ask"]
    assert seen["status"]["exists"] is False
    assert seen["status"]["files"] == 0
    assert not (tmp_path / "index").exists()


def test_stdout_carries_only_protocol_messages(index: Index) -> None:
    """Every line the server writes to stdout is a JSON-RPC message, even while models load."""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "Homebrew on macOS", "k": 1}},
        },
    ]
    stdin = "".join(json.dumps(r) + "\n" for r in requests)
    proc = subprocess.Popen(
        [str(RAG), "mcp", "--config", str(index.config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(stdin)
    proc.stdin.flush()
    messages = []
    while len([m for m in messages if "id" in m]) < 2:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        messages.append(json.loads(line))  # a non-JSON line fails here
    proc.stdin.close()
    rest = proc.stdout.read()
    proc.wait(timeout=60)
    for line in rest.splitlines():
        json.loads(line)
    assert all(m["jsonrpc"] == "2.0" for m in messages)
    [reply] = [m for m in messages if m.get("id") == 2]
    assert str(index.docs["markdown"]) in json.dumps(reply["result"])
