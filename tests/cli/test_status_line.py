"""The status line: which stage runs, in plain words, on a terminal only, gone before the answer."""

from __future__ import annotations

import io

from rich.console import Console

from raggity.cli.status_line import StatusLine


def terminal(*, is_terminal: bool = True) -> tuple[Console, io.StringIO]:
    screen = io.StringIO()
    return Console(file=screen, force_terminal=is_terminal, width=80), screen


def test_the_line_names_the_running_stage_and_is_erased_when_stopped() -> None:
    console, screen = terminal()
    said = []
    with StatusLine(console, shown=True) as line:
        for stage, n_in in (("embed", 1), ("dense", 1), ("focus", 3), ("model-judgement", 1)):
            line.stage(stage, n_in)
            said.append(line.words)
        line.stop()
        written = screen.getvalue()
        line.stage("generate", 1)  # after stop, never drawn again over the answer
        assert screen.getvalue() == written

    # A stage without words of its own ("dense") keeps the step's words.
    assert said == ["searching", "searching", "reading 3 sources", "checking that the sources answer it"]
    assert "checking that the sources answer it" in written
    # Transient: it ends by moving back over the line and clearing it, so the answer starts clean.
    assert written.endswith("\x1b[1A\x1b[2K")


def test_nothing_is_written_when_not_a_terminal_or_not_shown() -> None:
    for console, screen, shown in (
        (*terminal(is_terminal=False), True),
        (*terminal(), False),
    ):
        with StatusLine(console, shown=shown) as line:
            line.stage("embed", 1)
            line.stage("generate", 1)
        assert screen.getvalue() == ""
