"""Hostile lines to `rag chat` (with and without --json) as stdin delivers them: raw bytes, decoded by
the command's own reader. The model is a double through the API seam (a real one would make each
example take seconds) whose replies carry escape sequences themselves; retrieval is real.

Each example: no exception, one JSON object per message line (an answer, an error with its fix, or
a /reset), error lines on stderr in the one-line form, no raw ESC or C1 control on stdout or stderr,
and files written only where the chat was asked to, inside the tmp folder it runs in."""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raggity.api import Conversation, Raggity, load_config
from raggity.api.conversation import REWRITE_SYSTEM
from raggity.cli.chat_command import json_lines, plain_lines, stdin_lines
from raggity.testing import ScriptedGenerator
from tests.fuzz.conftest import FUZZ, Indexed, assert_no_escapes, hostile, outside_snapshot
from tests.support import Messages

COMMANDS = [
    b"/reset",
    b"  /reset  ",
    b"/sources",
    b"/help",
    b"/bogus \x1b[2J",
    b"/save",
    b"/save chat.md",
    b"/save \xff.md",
    b"/save sub/../chat2.md",
]
LINE = st.one_of(
    hostile(nul=True, undecodable=False).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.binary(max_size=60),
    st.sampled_from([b"\xff\xfe", b"caf\xe9 au lait?", b"\xc3", b"\xed\xa0\x80", b"word " * 5000]),
    st.sampled_from(COMMANDS),
    st.sampled_from([b"How do I install frobnicator on Linux?", b"And on macOS?", b"What is a levain?"]),
)
STDIN = st.lists(LINE, min_size=1, max_size=6).map(lambda lines: b"\n".join(lines) + b"\n")
# Lines the model double writes: what a small model copies from a hostile document.
HOSTILE_REPLY = "Unpack it \x1b]0;pwned\x07 into /opt \x9b2J\u202e [1]."


def script(messages: Messages) -> str:
    if messages[0]["content"] == REWRITE_SYSTEM:
        return "\x1b[2J not JSON"  # an unusable rewrite: the message is searched for as written
    return HOSTILE_REPLY


@contextmanager
def stdin_of(data: bytes, folder: Path) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    """stdin holding `data`, stdout and stderr captured, the cwd in `folder`."""
    saved_stdin, saved_cwd = sys.stdin, Path.cwd()
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    os.chdir(folder)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            yield out, err
    finally:
        sys.stdin = saved_stdin
        os.chdir(saved_cwd)


def message_lines(data: bytes) -> list[str]:
    """The lines of `data` that are messages, as the chat's reader splits them."""
    lines = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape").readlines()
    return [line for line in lines if line.strip()]


def assert_error_lines(stderr: str) -> None:
    assert "Traceback" not in stderr
    for line in stderr.splitlines():
        assert (
            line.startswith(
                (
                    "error: ",
                    "  fix: ",
                    "warning: ",
                    "unknown command",
                    "/save",
                )
            )
            or line.endswith(("already exists; /save to a new file name",))
            or "could not write" in line
        ), line


def conversation(indexed: Indexed) -> Conversation:
    session = Raggity(
        load_config(indexed.config), embedder=indexed.embedder, generator=ScriptedGenerator(script)
    )
    return Conversation(session)


@FUZZ
@given(data=STDIN)
def test_chat_json_answers_or_refuses_each_hostile_line(
    indexed: Indexed, data: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    work = tmp_path_factory.mktemp("chat")
    outside = outside_snapshot()
    with stdin_of(data, work) as (out, err):
        json_lines(conversation(indexed), stdin_lines())

    objects = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(objects) == len(message_lines(data))
    for obj in objects:
        kinds = [key for key in ("answer", "error", "reset") if key in obj]
        assert len(kinds) == 1, obj
        if "error" in obj:
            assert "\n" not in obj["error"], obj
            assert obj["fix"], obj
    assert_no_escapes(out.getvalue(), err.getvalue())
    assert_error_lines(err.getvalue())
    assert list(work.iterdir()) == []  # --json has no /save: nothing is written
    assert outside_snapshot() == outside


@FUZZ
@given(data=STDIN)
def test_plain_chat_answers_or_refuses_each_hostile_line(
    indexed: Indexed, data: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    work = tmp_path_factory.mktemp("chat")
    outside = outside_snapshot()
    with stdin_of(data, work) as (out, err):
        plain_lines(conversation(indexed), stdin_lines())

    assert_no_escapes(out.getvalue(), err.getvalue())
    assert_error_lines(err.getvalue())
    # /save writes only the files it was asked for, in the folder the chat runs in, without escapes.
    for saved in work.rglob("*"):
        assert saved.name in ("chat.md", "chat2.md", "\udcff.md"), saved
        if saved.is_file():
            assert_no_escapes(saved.read_text(encoding="utf-8", errors="surrogateescape"))
    assert outside_snapshot() == outside
