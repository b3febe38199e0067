"""The token budget: how much of the model's context the sources may take beside the question, the
instructions and the answer, and the context one question needs (`rag ask` loads no more)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from raggity.config.schema import GenerationConfig
from raggity.core.errors import ConfigError, ContextOverflowError
from raggity.core.protocols import Generator
from raggity.core.types import Chunk

# Tokens kept free for the chat template and the system prompt around the sources.
PROMPT_OVERHEAD = 320
# The least source text a prompt may carry: [generation] source_tokens cannot be set lower either.
_MIN_SOURCE_TOKENS = 64
# A context for one question is sized in these steps. What the estimate leaves out (a source's file
# name longer than its 24-token allowance) is covered by PROMPT_OVERHEAD's unused part (the longest
# instructions, Qwen's chat template and five long-named sources' wrappers took about 120 tokens
# beyond what the source budget charges) and the rounding; past that, llama-cpp-python shortens the
# answer's max_tokens, it does not fail.
_CONTEXT_STEP = 512
# What a source's wrapper (its number, file name and delimiters) is charged beside its text.
_SOURCE_WRAPPER_TOKENS = 24


def room_for_sources(question: str, model: Generator, max_tokens: int) -> int:
    """Prompt tokens left for sources beside `question`, the instructions and an answer of
    `max_tokens`. A question that leaves too few is refused here, not by llama.cpp: a pasted log as
    the question ended in an internal error."""
    beside = model.context_size - max_tokens - PROMPT_OVERHEAD
    if beside < _MIN_SOURCE_TOKENS:
        raise ConfigError(
            f"[generation] max_tokens ({max_tokens}) leaves no room for the prompt in a context of "
            f"{model.context_size} tokens",
            f"keep max_tokens at most context_size - {PROMPT_OVERHEAD + _MIN_SOURCE_TOKENS}",
        )
    question_tokens = model.count_tokens(question)
    if beside - question_tokens < _MIN_SOURCE_TOKENS:
        raise ContextOverflowError(
            f"the question is too long for the model: {question_tokens} tokens, where its context of "
            f"{model.context_size} leaves {beside} for the question and its sources",
            "ask a shorter question, or raise [generation] context_size",
        )
    return beside - question_tokens


def context_for_question(question: str, generation: GenerationConfig) -> int:
    """The context that answering `question` needs, at most [generation] context_size: the answer's
    max_tokens, the instructions, the question and the source budget, as `room_for_sources` counts
    them. The question's UTF-8 bytes bound its tokens for a byte-level tokenizer. llama.cpp
    allocates and clears the whole KV cache when the model loads (28 KB a token for the 1.5B model),
    so `rag ask`, which answers one question and then exits, loads a context this size: 1,536 tokens
    for a question of up to 300 bytes with the defaults, 70 MB less resident memory than 4,096."""
    needed = (
        generation.max_tokens
        + PROMPT_OVERHEAD
        + len(question.encode("utf-8", "surrogatepass"))
        + generation.source_tokens
    )
    return min(generation.context_size, -(-needed // _CONTEXT_STEP) * _CONTEXT_STEP)


def fit_to_budget(chunks: Sequence[Chunk], count_tokens: Callable[[str], int], budget: int) -> list[Chunk]:
    """Keeps chunks in rank order while they fit; the best chunk is cut to fit rather than dropped."""
    kept: list[Chunk] = []
    used = 0
    for chunk in chunks:
        cost = count_tokens(chunk.text) + _SOURCE_WRAPPER_TOKENS
        if used + cost <= budget:
            kept.append(chunk)
            used += cost
        elif not kept:
            ratio = max(budget - _SOURCE_WRAPPER_TOKENS, 1) / max(cost, 1)
            kept.append(_truncated(chunk, int(len(chunk.text) * ratio)))
            break
    return kept


def _truncated(chunk: Chunk, chars: int) -> Chunk:
    return Chunk(
        chunk.id,
        chunk.source,
        chunk.text[:chars],
        chunk.heading,
        chunk.location,
        chunk.parent_id,
        chunk.ordinal,
        chunk.n_tokens,
    )
