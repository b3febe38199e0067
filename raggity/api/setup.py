"""Writing a starter configuration file."""

from __future__ import annotations

from pathlib import Path

from raggity.config.writer import starter_toml
from raggity.core.atomic_file import atomic_write_text
from raggity.core.errors import RaggityError


def write_starter_config(path: Path, *, force: bool = False) -> Path:
    target = path / "raggity.toml" if path.is_dir() else path
    if target.exists() and not force:
        raise RaggityError(f"{target} already exists", "pass --force to overwrite it")
    atomic_write_text(target, starter_toml())
    return target.resolve()
