"""Writing a starter configuration file."""

from __future__ import annotations

from pathlib import Path

from raggity.config.writer import starter_toml
from raggity.core.atomic_file import atomic_write_text
from raggity.core.errors import RaggityError, os_reason


def write_starter_config(path: Path, *, force: bool = False) -> Path:
    try:
        target = path / "raggity.toml" if path.is_dir() else path
        # --force replaces a file by renaming a new one over it: over a link, a FIFO or a device that
        # would replace the link or the device itself (as root, /dev/null), never write the file meant.
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise RaggityError(f"{target} is not a regular file", "give the path of a new or a regular file")
        if target.exists() and not force:
            raise RaggityError(f"{target} already exists", "pass --force to overwrite it")
        atomic_write_text(target, starter_toml())
    except OSError as exc:
        # Creating the folders on the way fails with "file exists" where one of them is a file.
        reason = (
            "a folder on its path is a file" if isinstance(exc, FileExistsError) else os_reason(exc).lower()
        )
        raise RaggityError(f"{path}: cannot write here ({reason})", "choose another path") from exc
    return target.resolve()
