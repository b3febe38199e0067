"""The real models behind each seam, built from the configuration (the defaults `Raggity` loads
when a caller passes none). Heavy imports stay inside the functions: `rag search` must not import
llama.cpp, and `rag --help` must not import onnxruntime."""

from __future__ import annotations

from collections.abc import Callable

from raggity.config.schema import Config, RetrievalConfig
from raggity.core.protocols import Embedder, Scorer, Tokenizer
from raggity.models.registry import (
    describe_reranker_fix,
    resolve_embedder,
    resolve_generator,
    resolve_reranker,
)
from raggity.pipeline.generation import TextGenerator


def load_embedder(config: Config) -> Embedder:
    from raggity.inference.embedder import OnnxEmbedder  # noqa: PLC0415 - a model's runtime loads on first use

    cfg = config.embedding
    files = resolve_embedder(cfg, config.base_dir)
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


def load_generator(config: Config) -> TextGenerator:
    from raggity.inference.generator import LlamaGenerator  # noqa: PLC0415 - a model's runtime loads on first use

    cfg = config.generation
    model = resolve_generator(cfg, config.base_dir)
    return LlamaGenerator(
        model.gguf,
        identity=model.identity,
        context_size=cfg.context_size,
        threads=cfg.threads,
        seed=cfg.seed,
        gpu_layers=cfg.gpu_layers,
    )


def generator_identity(config: Config) -> str:
    """The configured generator's identity, without loading it (cache keys must not cost a model load)."""
    return resolve_generator(config.generation, config.base_dir).identity
