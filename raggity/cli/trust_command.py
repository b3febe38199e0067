"""`rag trust`: let a raggity.toml found by searching up use settings that reach outside its folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from raggity.cli.shared import out


def trust(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="The raggity.toml, or its folder (default: the one found from the current folder)."
        ),
    ] = None,
    revoke: Annotated[bool, typer.Option("--revoke", help="Stop trusting it.")] = False,
) -> None:
    """Trust a config file you have reviewed, so it may reach outside its folder.

    A raggity.toml found by searching up from the current folder may have come with a cloned
    repository. Until you trust it, raggity refuses its settings that reach outside its folder:
    [ingest] follow_symlinks, paths outside the folder in [index] path and [ingest] paths,
    [ingest] ignore_files that are paths, and model files ([embedding] model_path, [generation]
    model_path, model names that are paths). Trust records the file's SHA-256: after any edit,
    trust it again. A file named with --config or $RAGGITY_CONFIG is always trusted."""
    from raggity.cli.render import plain
    from raggity.config.loader import CONFIG_NAME, parse_config, read_config_bytes, search_up
    from raggity.config.trust import TrustStore, content_hash, owned_by_someone_else, reaching_keys
    from raggity.core.errors import ConfigError

    if path is None:
        found = search_up(Path.cwd())
        if found is None:
            raise ConfigError(
                f"{Path.cwd()}: no {CONFIG_NAME} here or in a parent folder",
                "give the path of the file to trust",
            )
        path = found
    target = (path / CONFIG_NAME if path.is_dir() else path).resolve()
    store = TrustStore()
    if revoke:
        removed = store.revoke(target)
        out.print(plain(f"{'no longer trusted' if removed else 'was not trusted'}: {target}"))
        return
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
    store.trust(target, digest)
    out.print(plain(f"trusted {target} (sha256 {digest[:16]}); after any edit, trust it again"))
    for reaching in reaching_keys(config):
        out.print(plain(f"  it may use: {reaching}"))
