"""TOML configuration: schema, discovery, validation and the `rag init` writer."""

from raggity.config.loader import CONFIG_ENV, CONFIG_NAME, find_config_file, load_config
from raggity.config.schema import (
    Config,
    EmbeddingConfig,
    GenerationConfig,
    IndexConfig,
    IngestConfig,
    RetrievalConfig,
)

__all__ = [
    "CONFIG_ENV",
    "CONFIG_NAME",
    "Config",
    "EmbeddingConfig",
    "GenerationConfig",
    "IndexConfig",
    "IngestConfig",
    "RetrievalConfig",
    "find_config_file",
    "load_config",
]
