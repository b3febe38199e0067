"""The optional dependencies of `raggity[scale]`, imported on first use with one clear error if absent."""

from __future__ import annotations

import importlib
from types import ModuleType

from raggity.core.errors import ConfigError

EXTRA_HINT = "install it with: pip install 'raggity[scale]'"


def require(module: str, feature: str = "the Ray ingest engine") -> ModuleType:
    """`module` (ray, lance_ray, boto3), or a one-line ConfigError naming the extra that brings it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(f"{feature} needs {module}, from the scale extra", EXTRA_HINT) from None
