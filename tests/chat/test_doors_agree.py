"""Every door a user opens (rag ask, rag chat, rag mcp's ask tool) makes the same decision on the
same question: the same stages run, so an answer, a refusal by the model's judgement, a reply no
source supports and an abstention by retrieval come out alike whichever door the question came
through."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import Client

from raggity.api import Raggity, answer_json, load_config
from raggity.api.conversation import Conversation
from raggity.mcp.server import build_server
from raggity.testing import ScriptedGenerator, never_refuses
from tests.chat.conftest import Index
from tests.chat.test_conversation import scripted_chat
from tests.mcp.test_mcp_server import payload
from tests.support import Messages

ANSWERED = "How do I install frobnicator on Linux?"
REFUSED = "How do I install frobnicator on macOS?"  # retrieved, then refused by the judgement below
ABSTAINED = "What is the capital of Mongolia?"  # retrieval finds nothing close: no model at all
UNSUPPORTED = "Who designed frobnicator for Linux?"  # answered with a reply no source supports
MOON = "Frobnicator was designed on the Moon by penguins."


def reply(messages: Messages) -> str:
    if "designed" in messages[-1]["content"].rsplit("Question:", 1)[-1]:
        return MOON
    return scripted_chat(messages)


def judge(messages: Messages, text: str) -> float:
    """The model's judgement: the macOS question's sources do not answer it, the others' do."""
    if "macOS" in messages[-1]["content"].rsplit("Question:", 1)[-1]:
        return 0.0 if text == "Yes" else 1.0
    return never_refuses(messages, text)


def session(index: Index) -> Raggity:
    generator = ScriptedGenerator(reply, judge)
    return Raggity(load_config(index.config), embedder=index.embedder, generator=generator)


def through_ask(index: Index, question: str) -> dict[str, Any]:
    return answer_json(session(index).ask(question), with_trace=False)


def through_chat(index: Index, question: str) -> dict[str, Any]:
    return answer_json(Conversation(session(index)).turn(question).answer, with_trace=False)


def through_mcp(index: Index, question: str) -> dict[str, Any]:
    config = load_config(index.config)
    server = build_server(session(index), config)

    async def call() -> dict[str, Any]:
        async with Client(server) as client:
            return payload(await client.call_tool("ask", {"question": question}))

    return asyncio.run(call())


def test_ask_chat_and_mcp_make_the_same_decision_on_the_same_questions(index: Index) -> None:
    decisions = {}
    for question in (ANSWERED, REFUSED, ABSTAINED, UNSUPPORTED):
        asked = through_ask(index, question)
        assert through_chat(index, question) == asked, question
        assert through_mcp(index, question) == asked, question
        decisions[question] = (
            asked["declined"],
            asked["refused"],
            asked["abstained"],
            asked["unsupported_reply"],
        )

    # The questions do reach the four decisions, so the agreement above covers each of them.
    assert decisions == {
        ANSWERED: (False, False, False, None),
        REFUSED: (True, True, False, None),
        ABSTAINED: (True, False, True, None),
        UNSUPPORTED: (True, True, False, MOON),
    }
