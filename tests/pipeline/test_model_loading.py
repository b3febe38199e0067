"""Which missing models are worth a warning on every command, and which loaded ones are let go."""

from __future__ import annotations

import gc
from dataclasses import replace

import numpy as np

from raggity.api.session import models_for_one_question
from raggity.config.schema import Config, GenerationConfig, RetrievalConfig
from raggity.pipeline.answer.budget import context_for_question, room_for_sources
from raggity.pipeline.model_loading import Models, load_scorer
from raggity.testing import HashEmbedder, ScriptedGenerator


def test_the_default_reranker_missing_is_quiet_a_named_one_is_not() -> None:
    warnings: list[str] = []
    assert load_scorer(Config(), warnings.append) is None
    assert warnings == []  # no offline install has it: doctor and status say so, not every command

    named = Config(retrieval=replace(RetrievalConfig(), rerank_model="my-reranker"))
    assert load_scorer(named, warnings.append) is None
    assert len(warnings) == 1
    assert "my-reranker" in warnings[0]
    assert "not installed" in warnings[0]


def test_for_one_question_the_search_models_are_let_go_once_the_search_is_done() -> None:
    models = Models(Config(), one_question=True)
    embedder = models.embedder
    before = models.embed(["the capital of France"])

    models.done_searching()

    assert models.embedder is not embedder  # released, loaded again when asked for
    assert np.array_equal(models.embed(["the capital of France"]), before)


def test_otherwise_and_for_models_handed_in_the_embedder_stays() -> None:
    kept = Models(Config())
    embedder = kept.embedder
    kept.done_searching()
    assert kept.embedder is embedder

    given = HashEmbedder()
    handed_in = Models(Config(), embedder=given, one_question=True)
    handed_in.done_searching()
    assert handed_in.embedder is given


def test_for_one_question_the_generator_loads_the_context_that_question_needs() -> None:
    """llama.cpp allocates the whole KV cache at load: `rag ask` sizes it to its one question, and
    the prompt's budget still leaves that question all of its source tokens."""
    config = Config(generation=replace(GenerationConfig(), model="smollm2-135m-instruct"))
    for question in ("What is the capital of France?", "東京の人口は何人ですか？" * 20):
        generator = models_for_one_question(config, question).generator

        assert generator.context_size == context_for_question(question, config.generation)
        assert generator.context_size < config.generation.context_size
        room = room_for_sources(question, generator, config.generation.max_tokens)
        assert room >= config.generation.source_tokens


def test_a_question_that_needs_more_than_the_configured_context_gets_the_configured_one() -> None:
    generation = GenerationConfig()
    assert context_for_question("why?", generation) < generation.context_size
    assert context_for_question("why? " * 1000, generation) == generation.context_size


def test_without_a_question_the_configured_context_loads() -> None:
    config = Config(generation=replace(GenerationConfig(), model="smollm2-135m-instruct", context_size=1024))
    assert Models(config).generator.context_size == 1024


def test_for_one_question_the_generator_is_let_go_once_the_answer_is_written() -> None:
    small = Config(generation=replace(GenerationConfig(), model="smollm2-135m-instruct"))
    models = Models(small, one_question=True)
    generator = models.generator

    models.done_generating()

    assert models.generator is not generator  # released, loaded again when asked for


def test_the_generator_let_go_is_freed_at_once_not_left_to_the_cycle_collector() -> None:
    import llama_cpp  # noqa: PLC0415 - only this test looks at the runtime's objects

    small = Config(generation=replace(GenerationConfig(), model="smollm2-135m-instruct"))
    models = Models(small, one_question=True)
    # An answer written and judged, as before citations by meaning: llama-cpp-python's objects
    # then hold one another.
    messages = [{"role": "user", "content": "Say hi."}]
    assert list(models.generator.stream(messages, max_tokens=2, temperature=0.0))
    assert 0 <= models.generator.continuation_probability(messages, "Hi") <= 1
    gc.disable()  # the collector must not run on its own and hide a model left in its cycles
    try:
        models.done_generating()
        alive = [o for o in gc.get_objects() if isinstance(o, llama_cpp.Llama)]
    finally:
        gc.enable()

    assert alive == []


def test_otherwise_and_when_handed_in_the_generator_stays() -> None:
    given = ScriptedGenerator(lambda _: "Paris.")
    handed_in = Models(Config(), generator=given, one_question=True)
    handed_in.done_generating()
    assert handed_in.generator is given

    small = Config(generation=replace(GenerationConfig(), model="smollm2-135m-instruct"))
    kept = Models(small)
    generator = kept.generator
    kept.done_generating()
    assert kept.generator is generator
