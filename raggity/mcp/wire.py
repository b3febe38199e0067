"""The two ends of `rag mcp`'s stdio wire, handed to the SDK's own transport (mcp.server.stdio's
`stdio_server(stdin=..., stdout=...)`): it still frames, validates and dispatches every message.

- In: each line read as bytes and checked as the transport will check it (UTF-8, JSON, a JSON-RPC
  message by the SDK's own adapter). A line that fails gets a JSON-RPC error reply, where the SDK
  alone dropped it and the client waited forever for its id: -32700 for bytes that are not UTF-8 or
  not JSON, -32602 for a request whose `params` is not an object, -32600 for anything else. Its id is
  the request's when one can be read, else null (as JSON-RPC 2.0 says).
- Out: each message line as the SDK wrote it, with every hidden character (bidi overrides, escape
  sequences, zero-width characters) as a \\u escape, as `rag search --json` prints them: the same
  value once parsed, nothing a terminal or a transcript would obey.

While serving, file descriptor 1 points at stderr, as the SDK's transport arranges when it owns the
streams: a library that prints cannot corrupt the protocol.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import IO, Any

import anyio
import anyio.to_thread
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)

from raggity.api import json_escaped

Reply = Callable[[JSONRPCError], None]


def malformed(line: bytes) -> JSONRPCError | None:
    """The error reply for a line the transport cannot take, or None for a well-formed message."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return _error(_request_id(line.decode("utf-8", "replace")), PARSE_ERROR, "Parse error: not UTF-8")
    try:
        data = json.loads(text)
    except ValueError:
        return _error(None, PARSE_ERROR, "Parse error: not JSON")
    try:
        jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError:
        pass
    else:
        return None
    request_id = _request_id(text)
    if isinstance(data, dict) and "method" in data and "id" not in data:
        return None  # a notification: JSON-RPC gives it no reply, and the SDK drops it
    if (
        isinstance(data, dict)
        and "method" in data
        and "params" in data
        and not isinstance(data["params"], dict)
    ):
        return _error(request_id, INVALID_PARAMS, "Invalid params: params must be an object")
    return _error(request_id, INVALID_REQUEST, "Invalid Request")


def _request_id(text: str) -> int | str | None:
    """The request's id when the line is a JSON object with a usable one (an integer or a string
    that is valid Unicode), else None."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    found = data.get("id") if isinstance(data, dict) else None
    if isinstance(found, int) and not isinstance(found, bool):
        return found
    if isinstance(found, str) and not any(0xD800 <= ord(c) <= 0xDFFF for c in found):
        return found
    return None


def _error(request_id: int | str | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


class CheckedLines:
    """stdin for the transport: the well-formed lines, in order. A malformed one is answered through
    `reply` (wired to the transport's write stream once it exists) and not passed on."""

    def __init__(self, source: IO[bytes]) -> None:
        self._source = source
        self._send, self._replies = anyio.create_memory_object_stream[JSONRPCError](64)

    @property
    def replies(self) -> Any:
        """The error replies to write, in the order their lines came."""
        return self._replies

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async with self._send:
            while line := await anyio.to_thread.run_sync(self._source.readline):
                if not line.strip():
                    continue
                problem = malformed(line)
                if problem is None:
                    yield line.decode("utf-8")
                else:
                    await self._send.send(problem)


class EscapedOut:
    """stdout for the transport: each line it writes, with hidden characters as \\u escapes."""

    def __init__(self, sink: IO[bytes]) -> None:
        self._sink = sink

    async def write(self, text: str) -> None:
        data = json_escaped(text).encode("utf-8")
        await anyio.to_thread.run_sync(self._sink.write, data)

    async def flush(self) -> None:
        await anyio.to_thread.run_sync(self._sink.flush)


@contextlib.contextmanager
def protocol_stdout() -> Iterator[IO[bytes]]:
    """The wire (a duplicate of fd 1) while fd 1 points at stderr; fd 1 is restored on exit."""
    sys.stdout.flush()
    wire = os.dup(1)
    os.dup2(2, 1)
    try:
        with os.fdopen(wire, "wb", closefd=False) as out:
            yield out
    finally:
        os.dup2(wire, 1)
        os.close(wire)
