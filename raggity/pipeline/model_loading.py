"""The real models behind each seam, built from the configuration (the defaults `Raggity` loads
when a caller passes none). Heavy imports stay inside the functions: `rag search` must not import
llama.cpp, and `rag --help` must not import onnxruntime."""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import replace

from raggity.config.schema import Config, EmbeddingConfig, RetrievalConfig
from raggity.core.protocols import Embedder, Generator, Scorer, Tokenizer, Vectors
from raggity.inference.heap import release_freed_memory
from raggity.models.registry import (
    EmbedderFiles,
    check_generator_name,
    describe_reranker_fix,
    resolve_embedder,
    resolve_generator,
    resolve_reranker,
)


def load_embedder(config: Config) -> Embedder:
    return onnx_embedder(resolve_embedder(config.embedding, config.base_dir), config.embedding)


def onnx_embedder(files: EmbedderFiles, cfg: EmbeddingConfig) -> Embedder:
    """The embedder in `files` with the [embedding] settings `cfg`: this process's, or a Ray worker's
    (ray_engine.EmbedChunks: the files the driver resolved, on a file system every worker sees)."""
    from raggity.inference.embedder import OnnxEmbedder  # noqa: PLC0415 - a model's runtime loads on first use

    return OnnxEmbedder(
        files.onnx,
        files.tokenizer,
        identity=files.identity,
        max_tokens=cfg.max_tokens,
        batch_size=cfg.batch_size,
        threads=cfg.threads,
        providers=cfg.providers,
    )


def load_tokenizer(config: Config) -> Tokenizer:
    from raggity.inference.tokenizer import HFTokenizer  # noqa: PLC0415 - a model's runtime loads on first use

    return HFTokenizer(resolve_embedder(config.embedding, config.base_dir).tokenizer)


def embedder_identity(config: Config) -> str:
    """The configured embedder's identity, without loading it."""
    return resolve_embedder(config.embedding, config.base_dir).identity


def load_scorer(config: Config, warn: Callable[[str], None]) -> Scorer | None:
    """The cross-encoder, or None when it is off or not installed.

    No offline install has the default cross-encoder, so its absence is not news on every command:
    the trace marks the stage skipped and `rag doctor`/`rag status` say how to install one. Only a
    reranker the user named (a non-default `rerank_model`) that cannot be found is warned about.
    """
    cfg = config.retrieval
    if not cfg.rerank:
        return None
    folder = resolve_reranker(cfg, config.base_dir)
    if folder is None:
        if cfg.rerank_model != RetrievalConfig.rerank_model:
            warn(f"reranking skipped: {describe_reranker_fix(cfg)}")
        return None
    from raggity.inference.cross_encoder import OnnxCrossEncoder  # noqa: PLC0415 - a model's runtime loads on first use

    return OnnxCrossEncoder(
        folder,
        max_tokens=cfg.rerank_max_tokens,
        threads=config.embedding.threads,
        providers=config.embedding.providers,
    )


def load_generator(config: Config, context_size: int | None = None) -> Generator:
    """`context_size`: a smaller context than the configured one, for a known need."""
    from raggity.inference.generator import LlamaGenerator  # noqa: PLC0415 - a model's runtime loads on first use

    cfg = config.generation
    model = resolve_generator(cfg, config.base_dir)
    return LlamaGenerator(
        model.gguf,
        identity=model.identity,
        context_size=cfg.context_size if context_size is None else context_size,
        threads=cfg.threads,
        seed=cfg.seed,
        gpu_layers=cfg.gpu_layers,
    )


def with_generation_model(config: Config, model: str) -> Config:
    """The config with another generation model by name (`rag ask --model`, `rag eval --model`); a
    configured model_path would override the name, so it is cleared. An unknown name is an error here,
    before any retrieval: a question that abstains never loads the model, and exited 0 with a typo."""
    check_generator_name(model)
    return replace(config, generation=replace(config.generation, model=model, model_path=""))


def generator_identity(config: Config) -> str:
    """The configured generator's identity, without loading it (cache keys must not cost a model load)."""
    return resolve_generator(config.generation, config.base_dir).identity


# Receives one-line warnings; the default drops them.
Warn = Callable[[str], None]


def no_warnings(_: str) -> None:
    pass


class Models:
    """The models one knowledge base uses, handed to the pipeline the way httpx clients take
    `transport=`: each one given is used as it is; each one not given is the real model the config
    names, loaded on first use (so `rag search` never loads the generator, and `rag --help` loads
    nothing). `warn` receives one-line warnings (a reranker the user named that cannot be found).

    `one_question` (`rag ask`): once the question's search is done (`done_searching`), the embedder
    and the cross-encoder this object loaded itself are let go and their memory returned, so they
    are not held beside the generator's weights at the process's peak (about 190 MB less). Should a
    later step embed again, they load again. Models handed in are never let go. `generator_context`:
    the context the generator loads with instead of the configured one, where the need is known
    (one question's: see api.session.models_for_one_question)."""

    def __init__(
        self,
        config: Config,
        *,
        embedder: Embedder | None = None,
        tokenizer: Tokenizer | None = None,
        scorer: Scorer | None = None,
        generator: Generator | None = None,
        warn: Warn = no_warnings,
        one_question: bool = False,
        generator_context: int | None = None,
    ) -> None:
        self._config = config
        self._one_question = one_question
        self._generator_context = generator_context
        self._handed_in = frozenset(
            role
            for role, model in (("embedder", embedder), ("scorer", scorer), ("generator", generator))
            if model is not None
        )
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._scorer = scorer
        self._scorer_resolved = scorer is not None
        self._generator = generator
        self._warn = warn

    def with_generator(self, generator: Generator) -> Models:
        """The same models (shared, not reloaded), answering through `generator` instead."""
        return Models(
            self._config,
            embedder=self._embedder,
            tokenizer=self._tokenizer,
            scorer=self._scorer if self._scorer_resolved else None,
            generator=generator,
            warn=self._warn,
            one_question=self._one_question,
            generator_context=self._generator_context,
        )

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = load_embedder(self._config)
        return self._embedder

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embeds with the embedder, loading it only when a text is first embedded."""
        return self.embedder.embed(texts)

    @property
    def embedder_identity(self) -> str:
        """The embedder's identity without loading it (an index check must not cost a model load)."""
        if self._embedder is not None:
            return self._embedder.identity
        return embedder_identity(self._config)

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self._config)
        return self._tokenizer

    @property
    def scorer(self) -> Scorer | None:
        """The cross-encoder, or None when it is off or not installed."""
        if not self._scorer_resolved:
            self._scorer = load_scorer(self._config, self._warn)
            self._scorer_resolved = True
        return self._scorer

    @property
    def generator(self) -> Generator:
        if self._generator is None:
            self._generator = load_generator(self._config, context_size=self._generator_context)
        return self._generator

    def done_searching(self) -> None:
        """The question's search is over: for `one_question`, the search models are let go. Not at
        the generator's load: a query transform loads it in the middle of the search."""
        if not self._one_question:
            return
        loaded = False
        if "embedder" not in self._handed_in and self._embedder is not None:
            self._embedder, loaded = None, True
        if "scorer" not in self._handed_in and self._scorer is not None:
            self._scorer, self._scorer_resolved, loaded = None, False, True
        if loaded:
            release_freed_memory()

    def done_generating(self) -> None:
        """The question's answer is written: for `one_question`, the generator this object loaded
        itself is let go and its memory returned, as `done_searching` does for the search models, so
        that a step after it that loads the embedder again (citations by meaning) does not hold the
        two at once. Only once nothing else holds the generator is its memory freed."""
        if not self._one_question or "generator" in self._handed_in or self._generator is None:
            return
        self._generator = None
        # llama-cpp-python's model, context and sampler hold one another (each one's exit stack
        # closes the others): dropped, they wait for the cycle collector, and rag ask's peak grew by
        # the embedder's load beside them (1.80 GB against 1.59 GB).
        gc.collect()
        release_freed_memory()

    @property
    def generator_identity(self) -> str:
        """The generator's identity without loading it (cache keys must not cost a model load)."""
        if self._generator is not None:
            return self._generator.identity
        return generator_identity(self._config)
