"""`rag chat`: JSON lines over stdin end to end, and the line editor's slash commands through a pipe."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from raggity.api import ContextOverflowError, Conversation
from raggity.cli.chat_command import interactive, json_lines, plain_lines, printable
from raggity.cli.render import CLOSEST_HEADING, display_path
from raggity.pipeline.answer.stages import REFUSAL_MESSAGE, UNSUPPORTED_MESSAGE
from raggity.testing import ScriptedGenerator
from tests.chat.conftest import Index
from tests.chat.test_conversation import chat, is_rewrite, refusing_judge, scripted_chat
from tests.support import (
    RAG,
    Messages,
    assert_clean_error,
    error_lines,
    this_checkout,
    write_config,
)


def _chat_json(config: Path, lines: str) -> subprocess.CompletedProcess[str]:
    """The real `rag chat --json` script, fed `lines` on stdin."""
    return subprocess.run(
        [str(RAG), "chat", "--json", "--config", str(config)],
        input=lines,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=this_checkout(dict(os.environ)),
    )


def _chat_bytes(config: Path, lines: bytes, *options: str) -> subprocess.CompletedProcess[bytes]:
    """The real `rag chat`, fed raw bytes on stdin (which need not be UTF-8)."""
    return subprocess.run(
        [str(RAG), "chat", *options, "--config", str(config)],
        input=lines,
        capture_output=True,
        timeout=600,
        check=False,
        env=this_checkout(dict(os.environ)),
    )


def test_a_line_that_is_not_utf8_is_refused_alone_and_the_json_chat_goes_on(index: Index) -> None:
    done = _chat_bytes(
        index.config, b"caf\xe9 au lait?\n/reset\nWhich moon of Jupiter has erupting volcanoes?\n", "--json"
    )
    stderr = done.stderr.decode("utf-8")

    assert done.returncode == 0, stderr
    assert "Traceback" not in stderr
    refused, reset, answered = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    assert refused["message"] == "caf\ufffd au lait?\n"
    assert refused["error"] == (
        "line 1 of stdin is not valid UTF-8 text: undecodable byte \\xe9 at character 4"
    )
    assert "iconv" in refused["fix"]
    assert reset == {"message": "/reset\n", "reset": True}
    assert answered["sources"][0]["source"] == str(index.docs["rst"])
    assert error_lines(stderr) == [f"error: {refused['error']}"]


def test_a_line_that_is_not_utf8_is_refused_alone_and_the_plain_chat_goes_on(index: Index) -> None:
    done = _chat_bytes(index.config, b"\xff\xfe\n/help\n")
    stderr = done.stderr.decode("utf-8")

    assert done.returncode == 0, stderr
    assert_clean_error(stderr)
    assert "undecodable byte \\xff at character 1" in stderr
    assert "/save FILE" in done.stdout.decode("utf-8")


def test_reset_in_json_forgets_the_conversation(index: Index, capsys: pytest.CaptureFixture[str]) -> None:
    generator = ScriptedGenerator(scripted_chat)
    conversation = chat(index, generator)
    json_lines(
        conversation, io.StringIO("How do I install frobnicator on Linux?\n  /reset \nAnd on macOS?\n")
    )
    _, reset, second = [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    assert reset == {"message": "  /reset \n", "reset": True}
    # After the reset, "And on macOS?" is a first message: nothing to rewrite it from.
    assert "rewrite" not in [t["stage"] for t in second["trace"]]
    assert not any(is_rewrite(c) for c in generator.calls)
    assert [t.text for t in conversation.turns] == ["And on macOS?\n"]
    assert all("/reset" not in m["content"] for c in generator.calls for m in c)


def test_one_over_long_message_does_not_poison_the_rest_of_the_chat(
    index: Index, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(messages: Messages) -> str:
        # As LlamaGenerator does when a prompt exceeds its context (tests/inference/test_continuation.py).
        if sum(len(m["content"].split()) for m in messages) > ScriptedGenerator.context_size:
            raise ContextOverflowError("the question is too long for the model", "shorter")
        return scripted_chat(messages)

    generator = ScriptedGenerator(script)
    conversation = chat(index, generator)
    # A pasted log longer than the model's context that retrieval declines: it was an abstention,
    # given without asking the model, so nothing refused it and it joined the conversation.
    pasted = " ".join(["zqx wvy"] * 2200)
    json_lines(
        conversation,
        io.StringIO(f"{pasted}\nHow do I install frobnicator on Linux?\nAnd on macOS?\n"),
    )
    shown = capsys.readouterr()
    pasted_turn, linux, mac = [json.loads(line) for line in shown.out.splitlines()]

    assert "error" not in linux, shown.err
    assert "error" not in mac, shown.err
    assert pasted_turn["error"].startswith("the question is too long for the model")
    assert "Unpack the tarball" in linux["answer"]
    assert "brew install frobnicator" in mac["answer"]
    # Every prompt the model was sent fitted its context; the long message was dropped from history.
    assert all(sum(len(m["content"].split()) for m in c) <= generator.context_size for c in generator.calls)
    assert all("zqx" not in m["content"] for c in generator.calls for m in c)


def test_save_writes_document_escape_characters_as_visible_escapes(
    index: Index, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(messages: Messages) -> str:
        return "Unpack the tarball into /opt/frobnicator \x1b]0;pwned\x07\x1b[2J\u202e and add its bin folder to your PATH [1]."

    conversation = chat(index, ScriptedGenerator(script))
    saved = tmp_path / "chat.md"
    plain_lines(conversation, io.StringIO(f"How do I install \x9b frobnicator on Linux?\n/save {saved}\n"))
    capsys.readouterr()
    markdown = saved.read_text(encoding="utf-8")

    assert not any(char in markdown for char in "\x1b\x07\x9b\u202e")
    assert "\\x1b]0;pwned\\x07\\x1b[2J<U+202E>" in markdown
    assert "install \\x9b frobnicator" in markdown


def test_rag_chat_json_answers_each_line_with_one_object(index: Index) -> None:
    questions = (
        "Which moon of Jupiter has erupting volcanoes?\n\nWhat is the boiling point of liquid nitrogen?\n"
    )
    done = _chat_json(index.config, questions)

    assert done.returncode == 0, done.stderr
    first, second = [json.loads(line) for line in done.stdout.splitlines()]
    assert first["message"] == "Which moon of Jupiter has erupting volcanoes?\n"
    assert first["abstained"] is False
    assert first["sources"][0]["source"] == str(index.docs["rst"])
    assert second["abstained"] is True
    assert second["sources"] == []
    assert "rewrite" in [t["stage"] for t in second["trace"]]


def test_rag_chat_without_an_index_fails_like_rag_ask(tmp_path: Path) -> None:
    """Before: exit 0 and a hallucinated answer, with "no index yet" only in a JSON field."""
    config = write_config(tmp_path, index={"path": str(tmp_path / "none")})
    for options in (["--json"], []):
        done = subprocess.run(
            [str(RAG), "chat", *options, "--config", str(config)],
            input="Hello?\n",
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            env=this_checkout(dict(os.environ)),
        )
        assert done.returncode == 4, done.stderr
        assert done.stdout == ""
        assert "no index yet" in assert_clean_error(done.stderr)
    assert not (tmp_path / "none").exists()


def test_rag_chat_json_writes_control_and_bidi_characters_as_escapes(
    index: Index, capsys: pytest.CaptureFixture[str]
) -> None:
    conversation = chat(index, ScriptedGenerator(scripted_chat))
    message = "How do I install frobnicator \u202e\u009b\x7f on Linux?"
    json_lines(conversation, io.StringIO(message + "\n"))
    written = capsys.readouterr().out

    assert written.count("\n") == 1  # one object per line
    assert all(escape in written for escape in ("\\u202e", "\\u009b", "\\u007f"))
    assert not any(char in written for char in "\u202e\u009b\x7f")
    assert json.loads(written)["message"] == message + "\n"


def test_piped_chat_cites_sources_as_rag_show_reads_them_and_takes_indented_commands(
    index: Index, capsys: pytest.CaptureFixture[str]
) -> None:
    generator = ScriptedGenerator(scripted_chat)
    conversation = chat(index, generator)
    plain_lines(conversation, io.StringIO("How often must API tokens be rotated?\n/sources\n  /reset\n"))
    shown = capsys.readouterr()

    # A page with no ids is cited by its name alone, as `rag ask` and `rag search` cite it.
    html = display_path(str(index.docs["html"]))
    assert f"] {html}  score " in shown.out
    assert f"{html}:" not in shown.out
    assert conversation.turns == ()
    assert all("/reset" not in m["content"] for c in generator.calls for m in c)


def test_a_message_too_long_for_the_model_is_an_error_and_the_chat_goes_on(
    index: Index, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(messages: Messages) -> str:
        # As LlamaGenerator does when a prompt exceeds its context (tests/inference/test_continuation.py).
        if sum(len(m["content"].split()) for m in messages) > ScriptedGenerator.context_size:
            raise ContextOverflowError("the question is too long for the model (4,500 words)", "shorter")
        return scripted_chat(messages)

    conversation = chat(index, ScriptedGenerator(script))
    pasted = " ".join(["ERROR connection refused"] * 1500)  # 4,500 words: the double's tokens
    plain_lines(conversation, io.StringIO(f"How do I install frobnicator on Linux?\n{pasted}\n"))
    json_lines(conversation, io.StringIO(f"{pasted}\nAnd on macOS?\n"))
    shown = capsys.readouterr()

    assert shown.err.count("error: the question is too long for the model") == 2
    # --json still writes one object per message: the long one's says why it has no answer.
    refused, answered = [json.loads(line) for line in shown.out.splitlines() if line.startswith("{")]
    # Refused before anything is retrieved or rewritten, in the words `rag ask` uses.
    assert refused == {
        "message": pasted + "\n",
        "error": "the question is too long for the model: 4500 tokens, where its context of 4096 "
        "leaves 3728 for the question and its sources",
        "fix": "ask a shorter question, or raise [generation] context_size",
    }
    assert answered["message"] == "And on macOS?\n"
    assert "Run brew install frobnicator" in answered["answer"]
    assert [t.text for t in conversation.turns] == [
        "How do I install frobnicator on Linux?\n",
        "And on macOS?\n",
    ]


def test_save_never_replaces_a_file_or_writes_through_a_link(
    index: Index, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conversation = chat(index, ScriptedGenerator(scripted_chat))
    notes = tmp_path / "notes.md"
    notes.write_text("precious\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("also precious\n", encoding="utf-8")
    (tmp_path / "link.md").symlink_to(elsewhere)
    (tmp_path / "dangling.md").symlink_to(tmp_path / "missing.txt")
    lines = "".join(f"/save {tmp_path / name}\n" for name in ("notes.md", "link.md", "dangling.md"))
    plain_lines(conversation, io.StringIO(lines))
    shown = capsys.readouterr()

    assert notes.read_text(encoding="utf-8") == "precious\n"
    assert elsewhere.read_text(encoding="utf-8") == "also precious\n"
    assert not (tmp_path / "missing.txt").exists()
    assert shown.err.count("already exists; /save to a new file name") == 3
    assert "saved" not in shown.out


def run_interactive(conversation: Conversation, keys: str) -> None:
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        interactive(conversation, terminal_in=pipe, terminal_out=DummyOutput())


def test_slash_commands_show_sources_save_and_reset(
    index: Index, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conversation = chat(index, ScriptedGenerator(scripted_chat))
    saved = tmp_path / "chat.md"
    run_interactive(
        conversation,
        "How do I install frobnicator on Linux?\r/sources\r"
        f"And on macOS?\r/save {saved}\r/bogus\r/help\r/reset\r\x04",
    )
    shown = capsys.readouterr()

    assert "Unpack the tarball into /opt/frobnicator and add its bin folder to your PATH [" in shown.out
    # /sources prints the last turn's sources in full: the whole Linux paragraph.
    assert "unpack it into /opt/frobnicator and add its bin folder to your PATH." in shown.out
    assert "(searched for: How do I install frobnicator on macOS?)" in shown.out
    assert "saved 2 turns" in shown.out
    assert "unknown command /bogus" in shown.err
    assert "/save FILE" in shown.out
    assert conversation.turns == ()

    markdown = saved.read_text(encoding="utf-8")
    assert markdown.count("## You") == 2
    assert "*Searched for: How do I install frobnicator on macOS?*" in markdown
    assert f"`{index.docs['markdown']}`" in markdown
    quoted = [line for line in markdown.splitlines() if line.startswith("> ")]
    assert any("On macOS install it with Homebrew" in line for line in quoted)


def test_piped_chat_runs_slash_commands_and_never_asks_the_model_them(
    index: Index, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    generator = ScriptedGenerator(scripted_chat)
    conversation = chat(index, generator)
    saved = tmp_path / "piped.md"
    plain_lines(
        conversation, io.StringIO(f"How do I install frobnicator on Linux?\n/sources\n/save {saved}\n")
    )
    shown = capsys.readouterr()

    assert len(conversation.turns) == 1
    assert all(
        "/save" not in m["content"] and "/sources" not in m["content"] for c in generator.calls for m in c
    )
    assert "unpack it into /opt/frobnicator and add its bin folder to your PATH." in shown.out
    assert "saved 1 turn" in shown.out
    assert saved.read_text(encoding="utf-8").count("## You") == 1


def test_ctrl_c_during_an_answer_cancels_it_and_the_chat_goes_on(
    index: Index, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[int] = []

    def script(messages: Messages) -> str:
        if is_rewrite(messages):
            return json.dumps({"question": "How do I install frobnicator on macOS?"})
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt  # what Ctrl-C raises while the model is generating
        return "Use Homebrew [1]."

    conversation = chat(index, ScriptedGenerator(script))
    run_interactive(
        conversation, "How do I install frobnicator on Linux?\rHow do I install frobnicator on macOS?\r\x04"
    )
    shown = capsys.readouterr()

    assert "answer cancelled" in shown.err
    [turn] = conversation.turns
    # The cancelled message never joined the history, so the next one was a first turn: no rewrite.
    assert turn.text == "How do I install frobnicator on macOS?"
    assert "rewrite" not in [t.stage for t in turn.answer.trace]
    assert "Use Homebrew [1]." in shown.out


def _plain_text(out: str) -> str:
    return " ".join(out.split())  # the console wraps long lines


def test_a_streamed_reply_no_source_supports_is_followed_by_the_decline_and_where_to_read(
    index: Index, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = "Frobnicator was designed on the Moon by penguins."
    conversation = chat(index, ScriptedGenerator(lambda _: reply))
    run_interactive(conversation, "How do I install frobnicator on Linux?\r\x04")
    shown = _plain_text(capsys.readouterr().out)

    after_reply = shown[shown.index(reply) + len(reply) :]
    assert after_reply.index(UNSUPPORTED_MESSAGE) < after_reply.index(CLOSEST_HEADING)
    [turn] = conversation.turns
    assert turn.answer.declined


def test_a_decline_by_the_models_judgement_is_printed_in_the_interactive_chat(
    index: Index, capsys: pytest.CaptureFixture[str]
) -> None:
    conversation = chat(index, ScriptedGenerator(scripted_chat, refusing_judge))
    run_interactive(conversation, "How do I install frobnicator on Linux?\r\x04")
    shown = _plain_text(capsys.readouterr().out)

    # It once printed an empty line where the decline's message belongs: nothing had streamed.
    assert REFUSAL_MESSAGE in shown
    assert shown.index(REFUSAL_MESSAGE) < shown.index(CLOSEST_HEADING)


def test_model_text_cannot_drive_the_terminal() -> None:
    # Shown as escapes, as every command shows data (raggity.cli.visible), never obeyed or dropped silently.
    assert printable("fine\x1b]0;pwned\x07 text\x1b[2J\n") == "fine\\x1b]0;pwned\\x07 text\\x1b[2J\n"
    assert printable("\u202eexe.txt") == "<U+202E>exe.txt"
