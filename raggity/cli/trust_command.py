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
    from raggity.api.trust import revoke_trust, trust_config  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain  # noqa: PLC0415 - deferred so `rag --help` stays instant

    if revoke:
        target, was_trusted = revoke_trust(path)
        out.print(plain(f"{'no longer trusted' if was_trusted else 'was not trusted'}: {target}"))
        return
    trusted = trust_config(path)
    out.print(plain(f"trusted {trusted.path} (sha256 {trusted.sha256[:16]}); after any edit, trust it again"))
    for setting in trusted.allows:
        out.print(plain(f"  it may use: {setting}"))
