"""The answer benchmark's default sample, apart from the benchmark so `rag eval --help` can show it
without importing the benchmark."""

DEFAULT_PER_GROUP = 200
DEFAULT_SEED = 0
