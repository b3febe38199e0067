"""Hostile values to the CLI's commands, in process through typer's runner: a result or a one-line
error, a documented exit code, no traceback, no escape sequence on stdout or stderr, and nothing
touched outside the tmp folders (the index itself is untouched by the read-only commands).

Not drawn: NUL, which argv cannot carry, and surrogates other than U+DC80-U+DCFF, which are how
Python keeps undecodable argv bytes (the only surrogates argv can hold)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from raggity.cli.main import app
from tests.fuzz.conftest import (
    EXIT_CODES,
    FUZZ,
    Indexed,
    assert_no_escapes,
    hostile,
    outside_snapshot,
    tree,
)

ARG = hostile(nul=False, undecodable=True)
SHORT = hostile(nul=False, undecodable=True, long=False)
NUMBER = st.one_of(st.integers(-(2**70), 2**70).map(str), SHORT)
# A name under the tmp folder the command runs in (cwd): no "..", not absolute.
LOCAL_NAME = SHORT.map(lambda s: s.replace("/", "_").replace("~", "_").lstrip("-") or "x").filter(
    lambda s: s not in (".", "..")
)


@contextmanager
def inside(folder: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def run(args: list[str]) -> tuple[int, str, str]:
    """`rag ARGS` in process; fails on anything that would have been a traceback."""
    result = CliRunner().invoke(app, args, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"rag {args!r} raised {result.exception!r}") from result.exception
    return result.exit_code, result.stdout, result.stderr


def assert_door_contract(args: list[str], code: int, stdout: str, stderr: str) -> None:
    assert code in EXIT_CODES, f"rag {args!r} exited {code}: {stderr[-500:]!r}"
    assert "Traceback" not in stdout + stderr
    assert_no_escapes(stdout, stderr)
    if code == 0:
        return
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    if code == 2 and not errors:
        assert "Usage:" in stderr, stderr  # the argument parser's own usage error
        return
    assert len(errors) == 1, f"rag {args!r}: {stderr!r}"
    fixes = [line for line in stderr.splitlines() if line.startswith("  fix:")]
    assert len(fixes) <= 1, stderr


def read_only_command(config: Path) -> st.SearchStrategy[list[str]]:
    c = ["--config", str(config)]
    return st.one_of(
        st.tuples(ARG, st.booleans()).map(lambda a: ["search", a[0], *c, *(["--json"] if a[1] else [])]),
        st.tuples(SHORT, NUMBER).map(lambda a: ["search", a[0], "--top-k", a[1], *c]),
        st.tuples(SHORT, SHORT).map(lambda a: ["search", a[0] or "x", "--path", a[1], *c]),
        st.tuples(ARG, st.booleans()).map(lambda a: ["show", a[0], *c, *(["--json"] if a[1] else [])]),
        SHORT.map(lambda a: ["status", *c, a]),
        SHORT.map(lambda a: ["graph", "show", a, *c]),
        st.lists(SHORT, max_size=4).map(lambda a: [*a, *c]),
        st.lists(SHORT, max_size=3).map(lambda a: ["search", *a, *c]),
    )


@FUZZ
@given(data=st.data())
def test_read_only_commands_take_hostile_values(
    indexed: Indexed, data: st.DataObject, tmp_path: Path
) -> None:
    index_before = tree(indexed.index)
    outside = outside_snapshot()
    args = data.draw(read_only_command(indexed.config))
    with inside(tmp_path):
        code, stdout, stderr = run(args)
    assert_door_contract(args, code, stdout, stderr)
    assert tree(indexed.index) == index_before, f"rag {args!r} wrote to the index"
    assert outside_snapshot() == outside


@FUZZ
@given(question=ARG, json_out=st.booleans())
def test_ask_takes_hostile_questions(indexed: Indexed, question: str, json_out: bool, tmp_path: Path) -> None:
    args = ["ask", question, "--config", str(indexed.config), *(["--json"] if json_out else [])]
    outside = outside_snapshot()
    with inside(tmp_path):
        code, stdout, stderr = run(args)
    assert_door_contract(args, code, stdout, stderr)
    assert outside_snapshot() == outside


@FUZZ
@given(name=LOCAL_NAME, command=st.sampled_from(["init", "ingest", "trust", "models-pull", "config"]))
def test_commands_that_write_take_hostile_names_and_write_only_under_tmp(
    indexed: Indexed, name: str, command: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    work = tmp_path_factory.mktemp("work")
    config = work / "raggity.toml"
    config.write_text(
        indexed.config.read_text(encoding="utf-8").replace(str(indexed.index), str(work / "index"))
    )
    args = {
        "init": ["init", name],
        "ingest": ["ingest", name, "--config", str(config)],
        "trust": ["trust", name],
        "models-pull": ["models", "pull", name],
        "config": ["status", "--config", name],
    }[command]
    outside = outside_snapshot()
    with inside(work):
        code, stdout, stderr = run(args)
    assert_door_contract(args, code, stdout, stderr)
    assert outside_snapshot() == outside
