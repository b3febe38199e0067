"""`rag trust`: record that the user reviewed a raggity.toml, so a found copy may reach outside its folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from raggity.config.loader import CONFIG_NAME, parse_config, read_config_bytes, search_up
from raggity.config.trust import TrustStore, content_hash, owned_by_someone_else, reaching_keys
from raggity.core.errors import ConfigError


@dataclass(frozen=True)
class Trusted:
    path: Path
    sha256: str
    # The settings that reach outside its folder, as `[section] key = value`, which trust now allows.
    allows: tuple[str, ...]


def config_to_trust(path: Path | None) -> Path:
    """PATH (a file, or a folder holding raggity.toml), or else the file found from the current folder."""
    if path is None:
        found = search_up(Path.cwd())
        if found is None:
            raise ConfigError(
                f"{Path.cwd()}: no {CONFIG_NAME} here or in a parent folder",
                "give the path of the file to trust",
            )
        path = found
    return (path / CONFIG_NAME if path.is_dir() else path).resolve()


def trust_config(path: Path | None) -> Trusted:
    target = config_to_trust(path)
    if not target.is_file():
        raise ConfigError(f"{target}: config file not found", "check the path")
    owner = owned_by_someone_else(target)
    if owner is not None:
        raise ConfigError(
            f"{target}: belongs to another user (uid {owner}); only your own files can be trusted",
            "copy it to a file of your own and pass that with --config",
        )
    raw = read_config_bytes(target)
    config = parse_config(raw.decode("utf-8"), target)  # a file that does not load is not worth trusting
    digest = content_hash(raw)
    TrustStore().trust(target, digest)
    return Trusted(target, digest, tuple(str(r) for r in reaching_keys(config)))


def revoke_trust(path: Path | None) -> tuple[Path, bool]:
    """The file, and whether it was trusted before."""
    target = config_to_trust(path)
    return target, TrustStore().revoke(target)
