"""Malformed JSON-RPC on `rag mcp`'s raw stdin: random bytes, text that is not JSON, JSON that is not
a message, requests with params of any type and lone surrogates, in one session per example. Every
request whose id can be read gets exactly one reply with that id (an error or a result), every other
line at most an error with a null id, the server keeps serving, stderr holds no traceback, and no line
on stdout carries a raw escape or bidi character."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.conftest import FUZZ_FEW, TRICKS, Indexed, assert_no_escapes, tree
from tests.support import RAG

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "f", "version": "0"},
    },
}
TEXT = st.one_of(st.sampled_from([*TRICKS, "\udce9", "\ud800"]), st.text(max_size=12))
VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), TEXT),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=5,
)
METHOD = st.sampled_from(
    ["tools/call", "tools/list", "prompts/get", "prompts/list", "resources/read", "ping", "nope"]
)
PARAMS = st.one_of(
    VALUE,
    st.fixed_dictionaries({"name": st.sampled_from(["status", "search", "nope"]) | TEXT, "arguments": VALUE}),
)


def _request(request_id: int, method: str, params: object, with_params: bool) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if with_params:
        message["params"] = params
    return json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")


REQUEST = st.tuples(METHOD, PARAMS, st.booleans())
NOISE = st.one_of(
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ")),
    VALUE.map(lambda v: json.dumps(v).encode()),
    st.sampled_from(
        [b"{", b"[]", b"null", b'{"jsonrpc":"2.0"}', b'{"jsonrpc":"2.0","method":"x","params":1}']
    ),
)


@FUZZ_FEW
@given(
    requests=st.lists(REQUEST, min_size=1, max_size=8), noise=st.lists(NOISE, max_size=6), seed=st.randoms()
)
def test_every_readable_request_gets_one_reply_and_the_rest_never_a_traceback(
    indexed: Indexed, requests: list[tuple[str, object, bool]], noise: list[bytes], seed: Any, tmp_path: Path
) -> None:
    before = tree(indexed.index)
    lines = [
        _request(n, method, params, with_params)
        for n, (method, params, with_params) in enumerate(requests, 1)
    ]
    mixed = lines + noise
    seed.shuffle(mixed)
    final = len(requests) + 1
    wire = [
        json.dumps(INITIALIZE).encode(),
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        *mixed,
    ]
    wire.append(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": final,
                "method": "tools/call",
                "params": {"name": "status", "arguments": {}},
            }
        ).encode()
    )
    errlog = tmp_path / "stderr.txt"
    with errlog.open("wb") as err:
        proc = subprocess.Popen(
            [str(RAG), "mcp", "--config", str(indexed.config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
        )
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(b"\n".join(wire) + b"\n")
        proc.stdin.flush()
        wanted = set(range(final + 1))
        replies: dict[object, list[dict[str, Any]]] = {}
        raw: list[bytes] = []
        deadline = time.monotonic() + 300
        while not wanted <= set(replies) and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            raw.append(line)
            message = json.loads(line)
            replies.setdefault(message.get("id"), []).append(message)
        proc.stdin.close()
        rest = proc.stdout.read()
        proc.wait(timeout=60)
    raw += rest.splitlines(keepends=True)
    for line in rest.splitlines():
        message = json.loads(line)
        replies.setdefault(message.get("id"), []).append(message)

    stderr = errlog.read_text(encoding="utf-8", errors="replace")
    assert wanted <= set(replies), (sorted(wanted - set(replies), key=str), mixed, stderr[-2000:])
    for request_id in wanted:
        assert len(replies[request_id]) == 1, replies[request_id]
    assert set(replies) - wanted <= {None}
    assert all("error" in m for m in replies.get(None, []))
    assert json.loads(replies[final][0]["result"]["content"][0]["text"])["exists"] is True
    assert "Traceback" not in stderr, stderr[-2000:]
    for line in raw:
        text = line.decode("utf-8")
        assert_no_escapes(text)
        assert "\u202e" not in text
        assert "\u2066" not in text
    assert tree(indexed.index) == before
