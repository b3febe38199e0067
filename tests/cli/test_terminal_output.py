"""Hostile document text, file names and model output reach the terminal as inert, visible data.

Everything runs through the installed `rag` script. The project folder, a document's name and its
text carry rich markup, escape sequences (clear screen, window title, OSC 8 link) and a right-to-left
override; the text also has `[/S]`, which rich used to reject as a closing tag (exit 70).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import assert_clean_error, rag, write_config

MARKUP = "DIR [/S] lists every file below a folder. Click [link=http://evil.example]x[/link] now."
HIDDEN = "[black on black]secret[/]"
CONTROLS = (
    "Clear \x1b[2J title \x1b]0;pwned\x07 link \x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\ end"
)
CONTROLS_SHOWN = "Clear \\x1b[2J title \\x1b]0;pwned\\x07 link \\x1b]8;;http://evil.example\\x1b\\click\\x1b]8;;\\x1b\\ end"
RLO = "Reversed \u202eexe.txt name"
DOCUMENT = f"# Windows commands\n\n{MARKUP} {HIDDEN}\n\n{CONTROLS}\n\n{RLO}\n"

FOLDER = "proj[blink]\u202e"
FOLDER_SHOWN = "proj[blink]<U+202E>"
NAME = "[link=http:evil]cmd\x1b[31m\u202egpj.md"
NAME_SHOWN = "[link=http:evil]cmd\\x1b[31m<U+202E>gpj.md"
BROKEN_PDF = "[red]broken\x1b[2J.pdf"
BROKEN_PDF_SHOWN = "[red]broken\\x1b[2J.pdf"
QUESTION = "What command lists every file below a folder?"

# What a terminal would obey: CSI/OSC introducers (7- and 8-bit), BEL, CR, and bidi controls.
OBEYED = ["\x1b", "\x07", "\r", "\x9b", "\x9d", "\u202e", "\u2066", "\u2069"]


def assert_inert(output: str) -> None:
    assert not [c for c in OBEYED if c in output], repr(output)


@dataclass(frozen=True)
class Project:
    root: Path
    env: dict[str, str]
    ingest: str


@pytest.fixture(scope="module")
def env(_state_dirs: dict[str, Path]) -> dict[str, str]:
    """The test's state folders, wide lines so tables do not wrap, and no forced colours."""
    env = {**os.environ, **{name: str(path) for name, path in _state_dirs.items()}, "COLUMNS": "1000"}
    for name in ("RAGGITY_CONFIG", "FORCE_COLOR", "TTY_COMPATIBLE"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Project:
    root = tmp_path_factory.mktemp("terminal") / FOLDER
    write_config(root, generation={"cache": True, "temperature": 0.0})
    docs = root / "docs"
    docs.mkdir()
    (docs / NAME).write_text(DOCUMENT, encoding="utf-8")
    (docs / BROKEN_PDF).write_bytes(b"not a pdf at all")
    done = rag("ingest", "docs", cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    return Project(root, env, done.stdout + done.stderr)


CACHED_TEXT = "Run DIR [/S] to list [link=http://evil.example]x[/link] files \x1b[2J below a folder [1]."


def test_ingest_shows_the_folder_and_a_skipped_name_as_data(project: Project) -> None:
    assert_inert(project.ingest)
    assert re.search(rf"^skipped 1 file: .*\n  'docs/{re.escape(BROKEN_PDF_SHOWN)}'$", project.ingest, re.M)
    assert f"index: {project.root.parent}/{FOLDER_SHOWN}/.raggity" in project.ingest


def test_search_shows_markup_controls_and_names_as_text(project: Project) -> None:
    done = rag("search", "list every file below a folder", cwd=project.root, env=project.env)
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout + done.stderr)
    assert f"docs/{NAME_SHOWN}:lines" in done.stdout
    assert "DIR [/S] lists" in done.stdout
    assert "[link=http://evil.example]x[/link]" in done.stdout
    # The snippet is cut at 160 characters; --json below checks the whole text.
    assert HIDDEN[:10] in done.stdout


def test_search_json_is_exact_and_inert(project: Project) -> None:
    done = rag("search", "clear title link", "--json", cwd=project.root, env=project.env)
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout)
    [hit] = json.loads(done.stdout)
    assert hit["source"].endswith(f"/docs/{NAME}")
    for part in (MARKUP, HIDDEN, CONTROLS, RLO):
        assert part in hit["text"]


def test_ask_streamed_plain_and_cached_all_print_the_same_inert_answer(project: Project) -> None:
    fresh = rag("ask", QUESTION, "--json", "--no-cache", cwd=project.root, env=project.env)
    assert fresh.returncode == 0, fresh.stderr
    assert_inert(fresh.stdout)

    streamed = rag("ask", QUESTION, "--no-cache", cwd=project.root, env=project.env)
    plain = rag("ask", QUESTION, "--no-cache", "--no-stream", cwd=project.root, env=project.env)
    stores = rag("ask", QUESTION, "--no-stream", cwd=project.root, env=project.env)
    # What the model writes is the model's business; what an answer may hold is any text. The cached
    # answer is rewritten to hold what rich would read as markup and what a terminal would obey.
    [entry] = list(project.root.rglob("cache/*.json"))
    cached_answer = json.loads(entry.read_text(encoding="utf-8"))
    cached_answer["text"] = CACHED_TEXT
    entry.write_text(json.dumps(cached_answer), encoding="utf-8")
    cached = rag("ask", QUESTION, "--no-stream", cwd=project.root, env=project.env)
    cached_streamed = rag("ask", QUESTION, cwd=project.root, env=project.env)
    cached_json = rag("ask", QUESTION, "--json", cwd=project.root, env=project.env)
    runs = [streamed, plain, stores, cached, cached_streamed, cached_json]
    assert [r.returncode for r in runs] == [0] * len(runs), [r.stderr for r in runs]
    assert json.loads(cached_json.stdout)["cached"] is True
    assert json.loads(cached_json.stdout)["answer"] == CACHED_TEXT
    for run in runs:
        assert_inert(run.stdout + run.stderr)
    assert len({r.stdout.strip() for r in [streamed, plain, stores]}) == 1
    for run in (cached, cached_streamed):
        first = run.stdout.splitlines()[0]
        assert first.startswith("Run DIR [/S] to list [link=http://evil.example]x[/link] files")
        assert "\\x1b[2J" in first  # the escape is shown, not obeyed


def test_status_shows_the_project_folder_as_data(project: Project) -> None:
    done = rag("status", cwd=project.root, env=project.env)
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout)
    assert f"config:      {project.root.parent}/{FOLDER_SHOWN}/raggity.toml" in done.stdout


def test_an_error_quoting_a_path_shows_it_as_data(project: Project) -> None:
    missing = "gone[red]\x1b]0;t\x07\u202e\nerror: fake line"
    done = rag("ingest", missing, cwd=project.root, env=project.env)
    assert done.returncode != 0
    assert_inert(done.stderr)
    line = assert_clean_error(done.stderr)
    assert "gone[red]\\x1b]0;t\\x07<U+202E>\\nerror: fake line" in line


@pytest.mark.parametrize("command", [["search"], ["ask"], ["ask", "--no-stream"], ["graph", "show"]])
def test_text_argument_that_is_not_utf8_is_refused_in_one_line(project: Project, command: list[str]) -> None:
    # Undecodable argv bytes reach Python as surrogates; subprocess turns them back into the bytes.
    done = rag(*command, os.fsdecode(b"caf\xe9 \xff"), cwd=project.root, env=project.env)
    assert done.returncode == 2, done.stderr
    line = assert_clean_error(done.stderr)
    assert "is not valid UTF-8 text: undecodable byte \\xe9 at character 4" in line


def test_graph_commands_show_entities_and_mentions_as_data(tmp_path: Path, env: dict[str, str]) -> None:
    write_config(
        tmp_path,
        retrieval={"graph": True},
        generation={"model": "smollm2-135m-instruct", "max_tokens": 64, "temperature": 0.0},
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / NAME).write_text(
        "Ada Lovelace \x1b]0;pwned\x07 worked with [bold]Charles Babbage[/] on the \u202eAnalytical Engine.\n",
        encoding="utf-8",
    )
    built = rag("ingest", "docs", cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    stats = rag("graph", "stats", cwd=tmp_path, env=env)
    assert stats.returncode == 0, stats.stderr
    assert_inert(stats.stdout)
    top = json.loads(rag("graph", "stats", "--json", cwd=tmp_path, env=env).stdout)["top"]
    assert top, "the model found no entity"
    shown = rag("graph", "show", top[0]["name"], cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    assert_inert(shown.stdout)
    assert (
        f"docs/{NAME_SHOWN}:line 1  Ada Lovelace \\x1b]0;pwned\\x07 worked with [bold]Charles" in shown.stdout
    )
