"""`rag chat`: a conversation with the documents, in a line editor or as JSON lines over stdin."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer
from rich.text import Text

from raggity.cli.errors import ArgumentError, report
from raggity.cli.shared import ConfigOption, err, not_utf8, out
from raggity.cli.shared import session as _session
from raggity.cli.visible import visible

if TYPE_CHECKING:
    from raggity.api import Conversation, RaggityError, Turn

HELP = """\
/sources      the last answer's sources in full
/reset        forget the conversation so far
/save FILE    write the conversation, with its sources, to a new FILE as Markdown
/help         this list
Enter sends; Esc then Enter starts a new line; Up/Down recall earlier messages.
Ctrl-C cancels the answer being written; Ctrl-D (on an empty line) leaves."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """Model and document text as the terminal shows it: controls visible, never obeyed."""
    return visible(text, keep_newlines=True)


def chat_command(
    config: ConfigOption = None,
    json_out: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Read one message per line from stdin; write one JSON object per turn to stdout.",
        ),
    ] = False,
) -> None:
    """Talk with your documents: follow-up questions, fresh sources every turn. /help inside lists commands."""
    from raggity.api import Conversation  # noqa: PLC0415 - deferred so `rag --help` stays instant

    conversation = Conversation(_session(config))
    if json_out:
        json_lines(conversation, stdin_lines())
    elif sys.stdin.isatty() and sys.stdout.isatty():
        interactive(conversation)
    else:
        plain_lines(conversation, stdin_lines())


def stdin_lines() -> TextIO:
    """stdin as text in which undecodable bytes survive as lone surrogates: a line that is not UTF-8
    is then refused on its own (see `unaskable`) and the chat goes on. The strict decoder raised in
    the middle of the read, which ended the chat as an internal error and lost every later line."""
    return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")


def unaskable(line: str, number: int) -> ArgumentError | None:
    """Why line `number` of stdin cannot be a message, in the words `rag ask` uses for its question."""
    return not_utf8(line, f"line {number} of stdin")


def error_json(line: str, exc: RaggityError) -> dict[str, Any]:
    """The object written for a message that gets no answer: one per line still, so that a script can
    pair its lines with the output. Undecodable bytes are shown as U+FFFD: JSON has no place for them."""
    return {"message": _SURROGATE.sub("\ufffd", line), "error": exc.message, "fix": exc.hint}


def turn_json(turn: Turn) -> dict[str, Any]:
    from raggity.api import answer_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

    data = answer_json(turn.answer)
    return {
        "message": turn.text,
        **data,
        "refused": turn.answer.refused,
        "sources": [
            {"source": c.chunk.source, "location": str(c.chunk.location), "score": round(c.score, 6)}
            for c in turn.sources
        ],
    }


def json_lines(conversation: Conversation, lines: TextIO) -> None:
    from raggity.api import RaggityError  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import json_text  # noqa: PLC0415 - deferred so `rag --help` stays instant

    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if line.strip() == "/reset":
            # The one command of --json: a script starts a new conversation without a new process.
            conversation.reset()
            data: dict[str, Any] = {"message": line, "reset": True}
        else:
            try:
                refused = unaskable(line, number)
                if refused is not None:
                    raise refused
                data = turn_json(conversation.turn(line))
            except RaggityError as exc:
                report(exc)
                data = error_json(line, exc)
        # One object per line, with control and bidi characters as \u escapes, as `rag ask --json`.
        sys.stdout.write(json_text(data, indent=None) + "\n")
        sys.stdout.flush()


def is_command(text: str) -> bool:
    """A /command, typed or pasted with spaces before it: "  /reset" is not a question."""
    return text.lstrip().startswith("/")


def plain_lines(conversation: Conversation, lines: TextIO) -> None:
    """stdin or stdout is not a terminal (`rag chat < questions.txt`, `rag chat | tee log`): each line
    is a message or a /command, as typed in the line editor; each answer printed when complete."""
    for number, line in enumerate(lines, start=1):
        if (refused := unaskable(line, number)) is not None:
            report(refused)
        elif is_command(line):
            slash_command(conversation, line.strip())
        elif line.strip() and (turn := _turn(conversation, line)) is not None:
            show_turn(turn, streamed=False)


def interactive(conversation: Conversation, *, terminal_in: Any = None, terminal_out: Any = None) -> None:
    """The line editor; `terminal_in`/`terminal_out` are prompt_toolkit's input and output (default:
    the terminal), which tests replace with a pipe."""
    from prompt_toolkit import PromptSession  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from prompt_toolkit.key_binding import KeyBindings  # noqa: PLC0415 - deferred so `rag --help` stays instant

    from raggity.cli.status_line import StatusLine  # noqa: PLC0415 - deferred so `rag --help` stays instant

    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    prompt: PromptSession[str] = PromptSession(key_bindings=keys, input=terminal_in, output=terminal_out)
    out.print("Ask about your documents. /help lists commands; Ctrl-D leaves.")
    while True:
        try:
            text = prompt.prompt("you> ")
        except KeyboardInterrupt:
            continue  # Ctrl-C at the prompt clears the line, as in a shell
        except EOFError:
            return
        if not text.strip():
            continue
        if is_command(text):
            slash_command(conversation, text.strip())
            continue
        streamed: list[str] = []
        try:
            with StatusLine(err, shown=True) as status:

                def on_token(piece: str) -> None:
                    status.stop()  # the answer's first text replaces the status line
                    streamed.append(piece)  # noqa: B023 - called only during this message's turn
                    stream_piece(piece)

                turn = _turn(conversation, text, on_token=on_token, on_stage=status.stage)
        except KeyboardInterrupt:
            sys.stdout.write("\n")
            err.print("(answer cancelled; it is not part of the conversation)")
            continue
        if turn is not None:
            show_turn(turn, streamed=bool(streamed))


def _turn(conversation: Conversation, text: str, on_token: Any = None, on_stage: Any = None) -> Turn | None:
    """The answer to one message, or None after saying on stderr why there is none (a message too
    long for the model, the index locked by a rebuild): that message gets no answer, the chat goes on."""
    from raggity.api import RaggityError  # noqa: PLC0415 - deferred so `rag --help` stays instant

    try:
        return conversation.turn(text, on_token=on_token, on_stage=on_stage)
    except RaggityError as exc:
        report(exc)
        return None


def stream_piece(piece: str) -> None:
    sys.stdout.write(printable(piece))
    sys.stdout.flush()


def show_turn(turn: Turn, *, streamed: bool) -> None:
    from raggity.cli.render import finish_reply, print_footer  # noqa: PLC0415 - deferred so `rag --help` stays instant

    answer = turn.answer
    finish_reply(out, answer, streamed=streamed)
    if turn.question != turn.text.strip():
        out.print(Text(f"(searched for: {printable(turn.question)})", style="dim"))
    print_footer(out, answer)
    out.print()


def slash_command(conversation: Conversation, command: str) -> None:
    name, _, argument = command.partition(" ")
    if name == "/help":
        out.print(Text(HELP))
    elif name == "/reset":
        conversation.reset()
        out.print("the conversation is forgotten; the next message starts afresh")
    elif name == "/sources":
        show_sources(conversation)
    elif name == "/save":
        save(conversation, argument.strip())
    else:
        err.print(Text(visible(f"unknown command {name}; /help lists them")))


def show_sources(conversation: Conversation) -> None:
    from raggity.cli.render import display_path  # noqa: PLC0415 - deferred so `rag --help` stays instant

    turns = conversation.turns
    if not turns or not turns[-1].sources:
        out.print("the last answer had no sources")
        return
    for n, c in enumerate(turns[-1].sources, start=1):
        out.print(
            Text(
                # As every command cites it, so that it can be passed to `rag show`.
                visible(f"[{n}] {c.chunk.location.cite(display_path(c.chunk.source))}  score {c.score:.3f}"),
                style="bold",
            )
        )
        out.print(Text(printable(c.chunk.text.strip())))
        out.print()


def save(conversation: Conversation, target: str) -> None:
    from raggity.api.transcript import transcript_markdown  # noqa: PLC0415 - deferred so `rag --help` stays instant

    if not target:
        err.print("/save needs a file name, e.g. /save chat.md")
        return
    path = Path(target).expanduser()
    try:
        # A new file only ("x" also refuses a symlink, even a dangling one): `/save notes.md` must not
        # replace the user's notes, or write through a link to a file elsewhere.
        with path.open("x", encoding="utf-8") as file:
            file.write(transcript_markdown(conversation.turns))
    except FileExistsError:
        err.print(Text(visible(f"{path} already exists; /save to a new file name")))
        return
    except OSError as exc:
        err.print(Text(visible(f"could not write {path}: {exc.strerror or exc}")))
        return
    out.print(Text(visible(f"saved {len(conversation.turns)} turns to {path}")))
