"""continuation_probability with the real small GGUF: it ranks the model's own reply above an
unlikely one, and reading it leaves the answer that follows unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from raggity.config.schema import GenerationConfig
from raggity.core.errors import ContextOverflowError
from raggity.inference.generator import LlamaGenerator
from raggity.models.registry import resolve_generator
from tests.isolation import isolated_state

MESSAGES = [
    {"role": "system", "content": "Answer in one short sentence."},
    {"role": "user", "content": "Paris is the capital of France. What is the capital of France?"},
]


@pytest.fixture(scope="module")
def generator(_state_dirs: dict[str, Path]) -> LlamaGenerator:
    with isolated_state(_state_dirs):  # module fixtures run outside conftest's per-test isolation
        files = resolve_generator(GenerationConfig(model="smollm2-135m-instruct"), Path("."))
        return LlamaGenerator(files.gguf, identity=files.identity, threads=1)


def _reply(generator: LlamaGenerator) -> str:
    return "".join(generator.stream(MESSAGES, max_tokens=12, temperature=0.0))


def test_the_models_own_opening_is_likelier_than_an_unrelated_one(generator: LlamaGenerator) -> None:
    reply = _reply(generator)
    opening = " ".join(reply.split()[:2])

    own = generator.continuation_probability(MESSAGES, opening)
    unrelated = generator.continuation_probability(MESSAGES, "Zebra xylophone")

    assert 0.0 < unrelated < own <= 1.0
    assert own > 0.05  # the greedy opening is no rare path


def test_reading_the_probability_leaves_the_answer_unchanged(generator: LlamaGenerator) -> None:
    """The evaluated prompt stays in llama's cache for the answer: it must not alter the answer."""
    generator.continuation_probability([{"role": "user", "content": "Something else entirely."}], "Yes")
    before = _reply(generator)

    generator.continuation_probability(MESSAGES, "The sources do not")
    after = _reply(generator)

    assert after == before


def test_judging_a_prompt_with_another_last_line_leaves_the_answer_unchanged(
    generator: LlamaGenerator,
) -> None:
    """The judgement prompt is the answer prompt with another last line: llama reuses the shared
    prefix from its cache, and the answer must be the one a fresh prefill gives."""
    generator.continuation_probability([{"role": "user", "content": "Something else entirely."}], "Yes")
    before = _reply(generator)
    judged = [
        MESSAGES[0],
        {"role": "user", "content": MESSAGES[1]["content"] + " If unsure, say: I do not know."},
    ]

    generator.continuation_probability(judged, "I do not")
    after = _reply(generator)

    assert after == before


def test_a_prompt_longer_than_the_context_is_a_one_line_error(generator: LlamaGenerator) -> None:
    # The answer prompt is checked before it is built; a query transform or a chat rewrite is not,
    # and llama.cpp's own ValueError ended in an internal error.
    long = [{"role": "user", "content": "word " * 5000}]
    with pytest.raises(ContextOverflowError, match="too long for the model") as raised:
        list(generator.stream(long, max_tokens=8, temperature=0.0))
    assert "[generation] context_size" in raised.value.hint
    with pytest.raises(ContextOverflowError):
        generator.continuation_probability(long, "Yes")
    assert _reply(generator)  # and the model still answers the next prompt


@pytest.fixture(scope="module")
def qwen(_state_dirs: dict[str, Path]) -> LlamaGenerator:
    """The 0.5B model: SmolLM2's readings of the prompt below did not move after another prompt."""
    with isolated_state(_state_dirs):
        files = resolve_generator(GenerationConfig(model="qwen2.5-coder-0.5b-instruct"), Path("."))
        return LlamaGenerator(files.gguf, identity=files.identity, threads=1)


def test_a_fresh_reading_does_not_depend_on_what_the_model_read_before(qwen: LlamaGenerator) -> None:
    """llama reads only what follows the prefix a prompt shares with the one before, and a prompt
    read in other batches rounds otherwise: with the 0.5B model this prompt's reading moved by 0.016
    after another question. The judgement reads fresh, so that an MCP server or `rag eval`, which
    answer one question after another, judge a question as `rag ask` does in a new process."""
    towns = " ".join(f"Town {i} lies on river {i % 7} and has {i * 13} inhabitants." for i in range(40))
    asked = [
        {"role": "system", "content": "Answer in one short sentence."},
        {"role": "user", "content": f"Sources: {towns} Question: How many inhabitants has town 12?"},
    ]
    before = [
        asked[0],
        {"role": "user", "content": "Sources: Town 0 lies on a hill. Question: Where is town 0?"},
    ]

    first = qwen.continuation_probability(asked, "Town 12", fresh=True)
    qwen.continuation_probability(before, "Yes")

    assert qwen.continuation_probability(asked, "Town 12", fresh=True) == first
