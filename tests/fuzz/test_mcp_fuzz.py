"""Hostile tool calls to `rag mcp` through the SDK's own stdio client: any JSON value for any
argument, missing and extra arguments, unknown tools. Each example starts the real server once and
makes a batch of calls in one session (a server per call would make the suite slow).

Each call: a JSON object, or a tool error of one line (no validation report, no URL, no raw escape
character); the server keeps answering, writes nothing to stderr but warnings (no traceback), and
leaves the index untouched.

Not drawn: lone surrogates and NaN, which are not valid JSON-RPC text; the server answers a line
holding one with a JSON-RPC error (-32600), which tests/fuzz/test_jsonrpc_fuzz.py checks on the raw
wire, where the SDK's client could not send them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
from hypothesis import given
from hypothesis import strategies as st
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import TextContent

from tests.fuzz.conftest import FUZZ_FEW, Indexed, assert_no_escapes, hostile, outside_snapshot, tree
from tests.support import RAG, this_checkout

TEXT = hostile(nul=True, undecodable=False)
JSON_VALUE = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        TEXT,
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
ARGUMENT = st.one_of(TEXT, JSON_VALUE)
SEARCH = st.fixed_dictionaries(
    {}, optional={"query": ARGUMENT, "k": st.one_of(st.integers(-5, 60), JSON_VALUE), "extra": JSON_VALUE}
).map(lambda a: ("search", a))
# ask runs the real model when retrieval does not decline: few of them per batch.
ASK = st.fixed_dictionaries({}, optional={"question": ARGUMENT, "extra": JSON_VALUE}).map(
    lambda a: ("ask", a)
)
OTHER = st.one_of(
    st.just(("status", {})),
    st.dictionaries(TEXT, JSON_VALUE, max_size=2).map(lambda a: ("status", a)),
    st.tuples(st.sampled_from(["", "ingest", "Search", "search ", "\x1b[2J"]), st.just({})),
)
CALLS = st.tuples(
    st.lists(SEARCH, min_size=1, max_size=8), st.lists(ASK, max_size=1), st.lists(OTHER, max_size=3)
)


def check_result(name: str, arguments: dict[str, Any], result: Any) -> None:
    texts = [b.text for b in result.content if isinstance(b, TextContent)]
    if result.is_error:
        [text] = texts
        assert "\n" not in text, (name, arguments, text)
        assert "pydantic" not in text, (name, arguments, text)
        assert "https://" not in text, (name, arguments, text)
        assert_no_escapes(text)
        assert text.strip(), (name, arguments)
    else:
        [text] = texts
        assert isinstance(json.loads(text), dict), (name, arguments, text)


@FUZZ_FEW
@given(calls=CALLS)
def test_mcp_tools_answer_or_refuse_hostile_calls_in_one_line(
    indexed: Indexed, calls: tuple[list[Any], list[Any], list[Any]], tmp_path: Path
) -> None:
    before = tree(indexed.index)
    outside = outside_snapshot()
    errlog = tmp_path / "server-stderr.txt"
    server = StdioServerParameters(
        command=str(RAG), args=["mcp", "--config", str(indexed.config)], env=this_checkout(dict(os.environ))
    )
    batch = [call for group in calls for call in group]

    async def main() -> None:
        with errlog.open("w", encoding="utf-8") as log:
            async with (
                stdio_client(server, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for name, arguments in batch:
                    with anyio.fail_after(300):
                        result = await session.call_tool(name, arguments)
                    check_result(name, arguments, result)
                # Still serving after all of that.
                status = await session.call_tool("status", {})
                assert json.loads(status.content[0].text)["exists"] is True  # type: ignore[union-attr]

    anyio.run(main)

    stderr = errlog.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in stderr, stderr[-2000:]
    assert_no_escapes(stderr)
    assert tree(indexed.index) == before
    assert outside_snapshot() == outside
