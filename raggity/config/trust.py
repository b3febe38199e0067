"""Which settings reach outside a config's folder, and which found config files the user trusts to use them.

A raggity.toml found by walking up from the current folder may have come with a cloned repository
or an unpacked archive. Its harmless keys apply as usual, but a value that reaches outside its folder
(following links out, reading or writing other folders, loading an arbitrary model file) applies only
when the file is the user's own: named with --config or $RAGGITY_CONFIG, or owned by the user and
recorded by `rag trust` with the SHA-256 of its content, so that any later edit needs trust again
(like direnv's `allow`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raggity.config.schema import SECTIONS, Config, Reach, data_home
from raggity.core.atomic_file import atomic_write_text


@dataclass(frozen=True)
class ReachingKey:
    """One configured value that reaches outside the config file's folder."""

    section: str
    key: str
    value: Any

    def __str__(self) -> str:
        return f"[{self.section}] {self.key} = {json.dumps(self.value, ensure_ascii=False)}"


def reaching_keys(config: Config) -> list[ReachingKey]:
    """The values of `config` that reach outside its folder, in schema order."""
    found = []
    for section in SECTIONS:
        values = getattr(config, section)
        for field in dataclasses.fields(values):
            reach = field.metadata.get("reach")
            value = getattr(values, field.name)
            if reach is not None and _reaches(reach, value, config.base_dir):
                found.append(ReachingKey(section, field.name, value))
    return found


def _reaches(reach: Reach, value: Any, base_dir: Path) -> bool:
    if reach is Reach.WHEN_SET:
        return bool(value)
    items = value if isinstance(value, list) else [value]
    if reach is Reach.PATH_OUTSIDE:
        if any("://" in item for item in items):
            return True  # an index on object storage: `rag ingest` would upload the documents there
        inside = base_dir.resolve()
        return any(not (inside / Path(item).expanduser()).resolve().is_relative_to(inside) for item in items)
    if reach is Reach.MODEL_AS_PATH:
        return any(_has_separator(item) or item.startswith((".", "~")) for item in items)
    return any(_has_separator(item) or item in (".", "..") for item in items)


def _has_separator(name: str) -> bool:
    return "/" in name or os.sep in name or (os.altsep is not None and os.altsep in name)


def trust_file() -> Path:
    return data_home() / "trusted-configs.json"


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def owned_by_someone_else(path: Path) -> int | None:
    """The owner's uid when it is not the current user (None on systems without uids)."""
    current = getattr(os, "geteuid", None)
    if current is None:
        return None
    owner = path.stat().st_uid
    return owner if owner != current() else None


class TrustStore:
    """Trusted config files: absolute path to the SHA-256 of the content the user reviewed."""

    def __init__(self, file: Path | None = None) -> None:
        self._file = file or trust_file()

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self._file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # no file yet, or a damaged one: nothing is trusted, `rag trust` rewrites it
        configs = data.get("configs") if isinstance(data, dict) else None
        return {k: v for k, v in configs.items() if isinstance(v, str)} if isinstance(configs, dict) else {}

    def _save(self, configs: dict[str, str]) -> None:
        atomic_write_text(
            self._file, json.dumps({"version": 1, "configs": configs}, indent=2, sort_keys=True)
        )

    def digest(self, path: Path) -> str | None:
        """The hash recorded for `path`, or None when it was never trusted."""
        return self._load().get(str(path.resolve()))

    def trust(self, path: Path, digest: str) -> None:
        configs = self._load()
        configs[str(path.resolve())] = digest
        self._save(configs)

    def revoke(self, path: Path) -> bool:
        configs = self._load()
        removed = configs.pop(str(path.resolve()), None) is not None
        if removed:
            self._save(configs)
        return removed
