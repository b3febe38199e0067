"""A yes-or-no answer names the thing: through the whole ask pipeline (real index and embedder, a
scripted model), a reply that says "yes" back to the question is retried, and one that names what
in the source does it is the answer."""

from __future__ import annotations

from pathlib import Path

from raggity.api import Raggity, load_config
from raggity.pipeline.answer.prompt import STRICT_INSTRUCTION
from raggity.pipeline.answer.stages import NO_ANSWER_MESSAGE
from raggity.testing import ScriptedGenerator
from tests.support import write_config

CLIENT_MD = """\
# Authentication

The client supports basic authentication. Pass auth=("username", "secret") when you create
the Client, and every request it sends carries the credentials.
"""
QUESTION = "Can I use basic authentication with the client?"
SAYS_IT_BACK = "Yes, you can use basic authentication with the client [1]."


def session_with(tmp_path: Path, *replies: str) -> tuple[Raggity, ScriptedGenerator]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "client.md").write_text(CLIENT_MD, encoding="utf-8")
    config = load_config(write_config(tmp_path / "cfg", index={"path": str(tmp_path / "index")}))
    written = iter(replies)
    generator = ScriptedGenerator(lambda messages: next(written))
    session = Raggity(config, generator=generator)
    session.ingest([docs])
    return session, generator


def test_a_yes_that_names_nothing_is_retried_and_the_reply_that_names_it_is_the_answer(
    tmp_path: Path,
) -> None:
    session, generator = session_with(
        tmp_path, SAYS_IT_BACK, 'Yes: pass auth=("username", "secret") when you create the Client.'
    )
    streamed: list[str] = []

    answer = session.ask(QUESTION, on_token=streamed.append)

    assert not answer.refused
    assert answer.text.startswith('Yes: pass auth=("username", "secret") when you create the Client')
    assert answer.citations
    assert "".join(streamed) == answer.text  # the reply that said the question back never showed
    assert generator.calls[1][-1]["content"].endswith(STRICT_INSTRUCTION)
    assert {t.stage: t for t in answer.trace}["generate-strict"].detail["first_shape"] == "restated"


def test_a_yes_that_names_nothing_twice_is_no_answer(tmp_path: Path) -> None:
    session, _ = session_with(tmp_path, SAYS_IT_BACK, "Yes, the client supports basic authentication [1].")

    answer = session.ask(QUESTION)

    assert answer.refused
    assert answer.text == NO_ANSWER_MESSAGE
