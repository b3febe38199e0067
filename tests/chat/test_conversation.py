"""The Conversation API over a real index: plumbing with a scripted generator, then SmolLM2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raggity.api import IndexStateError, Raggity, load_config
from raggity.api.conversation import REWRITE_SYSTEM, Conversation
from raggity.pipeline.model_loading import load_generator
from raggity.testing import RecordingGenerator, ScriptedGenerator
from tests.chat.conftest import Index
from tests.support import Messages, write_config

SOURCE_BLOCK = "<source id="


def is_rewrite(messages: Messages) -> bool:
    return messages[0]["content"] == REWRITE_SYSTEM


def answer_calls(generator: ScriptedGenerator) -> list[list[dict[str, str]]]:
    return [m for m in generator.calls if not is_rewrite(m)]


def chat(index: Index, generator: ScriptedGenerator | RecordingGenerator) -> Conversation:
    return Conversation(Raggity(load_config(index.config), embedder=index.embedder, generator=generator))


REWRITES = {
    "And on macOS?": "How do I install frobnicator on macOS?",
    "How long does its bulk rise take?": "How long does the sourdough bulk rise take?",
}


def scripted_chat(messages: Messages) -> str:
    if is_rewrite(messages):
        follow_up = messages[-1]["content"].rsplit("Follow-up: ", 1)[1]
        return json.dumps({"question": REWRITES[follow_up]})
    if "macOS" in messages[-1]["content"].rsplit("Question:", 1)[-1]:
        return MAC_REPLY
    return LINUX_REPLY


# Replies the Linux and macOS paragraphs support, so that the pipeline attaches their source.
LINUX_REPLY = "Unpack the tarball into /opt/frobnicator and add its bin folder to your PATH [1]."
MAC_REPLY = "Run brew install frobnicator in a terminal [1]."


def test_each_turn_gets_fresh_sources_and_history_never_holds_a_source_block(index: Index) -> None:
    generator = ScriptedGenerator(scripted_chat)
    conversation = chat(index, generator)

    first = conversation.turn("How do I install frobnicator on Linux?")
    second = conversation.turn("And on macOS?")

    # The first turn is its own question: no rewrite call.
    assert first.question == "How do I install frobnicator on Linux?"
    assert "rewrite" not in [t.stage for t in first.answer.trace]
    assert second.question == "How do I install frobnicator on macOS?"
    [rewrite] = [t for t in second.answer.trace if t.stage == "rewrite"]
    assert rewrite.detail["question"] == second.question
    assert rewrite.detail["from"] == "And on macOS?"

    [_, turn_two] = answer_calls(generator)
    roles = [m["role"] for m in turn_two]
    assert roles == ["system", "user", "assistant", "user"]
    history, request = turn_two[1:3], turn_two[3]
    assert history[0]["content"] == "How do I install frobnicator on Linux?"
    # The stored answer keeps its words but not its [1]: that number meant turn one's sources.
    assert history[1]["content"] == LINUX_REPLY.replace(" [1]", "")
    assert all(SOURCE_BLOCK not in m["content"] for m in turn_two[:3])
    assert SOURCE_BLOCK in request["content"]
    assert "Question: How do I install frobnicator on macOS?" in request["content"]
    assert sum(m["content"].count(SOURCE_BLOCK) for m in turn_two) == request["content"].count(SOURCE_BLOCK)
    assert {c.chunk.source for c in second.sources} >= {str(index.docs["markdown"])}


def test_follow_up_on_another_topic_retrieves_that_topic(index: Index) -> None:
    generator = ScriptedGenerator(scripted_chat)
    conversation = chat(index, generator)
    conversation.turn("How do I install frobnicator on Linux?")
    turn = conversation.turn("How long does its bulk rise take?")

    assert turn.question == "How long does the sourdough bulk rise take?"
    assert turn.sources[0].chunk.source == str(index.docs["text"])
    request = answer_calls(generator)[-1][-1]["content"]
    assert str(index.docs["text"]) in request
    assert str(index.docs["markdown"]) not in request


def test_an_unusable_rewrite_falls_back_to_the_message_itself(index: Index) -> None:
    def script(messages: Messages) -> str:
        return "not json at all" if is_rewrite(messages) else "Answer [1]."

    conversation = chat(index, ScriptedGenerator(script))
    conversation.turn("How do I install frobnicator on Linux?")
    turn = conversation.turn("Where do sourdough starters get their yeast?")

    assert turn.question == "Where do sourdough starters get their yeast?"
    [rewrite] = [t for t in turn.answer.trace if t.stage == "rewrite"]
    assert rewrite.detail["fallback"] is True


def test_history_drops_the_oldest_exchanges_when_the_context_is_short(index: Index) -> None:
    generator = ScriptedGenerator(
        lambda m: json.dumps({"question": "What is a levain?"}) if is_rewrite(m) else "word " * 40
    )
    # 48 answer tokens + 320 overhead: half of the rest (about 100 words) is left for history.
    generator.context_size = 570  # type: ignore[misc]
    conversation = chat(index, generator)
    for n in range(4):
        conversation.turn(f"Question number {n} about sourdough starters?")

    last = answer_calls(generator)[-1]
    history_users = [m["content"] for m in last[1:-1] if m["role"] == "user"]
    assert history_users
    assert "Question number 0 about sourdough starters?" not in history_users
    assert history_users[-1] == "Question number 2 about sourdough starters?"
    [stage] = [t for t in conversation.turns[-1].answer.trace if t.stage == "history"]
    assert stage.detail["dropped"] >= 1
    # The current turn's sources are never what gets dropped.
    assert SOURCE_BLOCK in last[-1]["content"]


def test_a_conversation_without_an_index_fails_at_the_start_and_never_asks_the_model(
    tmp_path: Path, index: Index
) -> None:
    """Before: each turn was answered from the conversation alone ("The document you provided is
    from the United States of America.") with the missing index only in a JSON field."""
    config = write_config(tmp_path, index={"path": str(tmp_path / "missing-index")})
    generator = ScriptedGenerator(lambda m: "You asked about otters.")

    with pytest.raises(IndexStateError, match="no index yet"):
        Conversation(Raggity(load_config(config), embedder=index.embedder, generator=generator))
    assert generator.calls == []
    assert not (tmp_path / "missing-index").exists()


def test_an_interrupted_turn_leaves_the_history_as_it_was(index: Index) -> None:
    conversation = chat(index, ScriptedGenerator(scripted_chat))
    conversation.turn("How do I install frobnicator on Linux?")

    def cancel(piece: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        conversation.turn("And on macOS?", on_token=cancel)
    assert len(conversation.turns) == 1
    conversation.reset()
    assert conversation.turns == ()


def refusing_judge(_: Messages, text: str) -> float:
    """A judgement certain that the sources do not answer: "No", and the refusal's opening."""
    return 0.0 if text == "Yes" else 1.0


def test_chat_declines_where_ask_declines_by_the_models_judgement(index: Index) -> None:
    """The same question, the same model judgement: ask and chat make the same decision (chat once
    skipped the judgement and answered what ask declined)."""
    question = "How do I install frobnicator on Linux?"
    asked = Raggity(
        load_config(index.config),
        embedder=index.embedder,
        generator=ScriptedGenerator(scripted_chat, refusing_judge),
    ).ask(question)
    chatting = ScriptedGenerator(scripted_chat, refusing_judge)

    turn = chat(index, chatting).turn(question)

    assert asked.refused
    assert turn.answer.refused
    assert turn.answer.text == asked.text
    assert chatting.judged  # the judgement was read, through the history wrapper
    assert answer_calls(chatting) == []  # and nothing was generated after it


def test_a_real_chat_with_smollm_follows_up_and_declines(index: Index) -> None:
    config = load_config(index.config)
    generator = RecordingGenerator(load_generator(config))
    conversation = chat(index, generator)

    first = conversation.turn("Which moon of Jupiter has erupting volcanoes?")
    second = conversation.turn("How do I install frobnicator on macOS?")
    third = conversation.turn("What is the boiling point of liquid nitrogen?")

    assert not first.answer.abstained
    assert first.sources[0].chunk.source == str(index.docs["rst"])
    assert not second.answer.abstained
    assert second.question.strip()
    assert str(index.docs["markdown"]) in {c.chunk.source for c in second.sources}
    assert str(index.docs["rst"]) not in {c.chunk.source for c in second.sources}
    assert third.answer.abstained
    assert third.sources == ()
    # Whatever the model wrote, each answer cites only its own turn's sources.
    for turn in (first, second):
        given = {c.chunk.source for c in turn.sources}
        assert {c.source for c in turn.answer.citations} <= given
