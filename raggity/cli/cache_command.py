"""`rag cache stats` and `rag cache clear`: the answer and query-transform cache of the index."""

from __future__ import annotations

from dataclasses import asdict

import typer

from raggity.cli.shared import ConfigOption, JsonOption, load, out

cache_app = typer.Typer(
    help="Inspect or clear the answer cache ([generation] cache = true).", no_args_is_help=True
)


@cache_app.command("stats")
def stats(config: ConfigOption = None, json_out: JsonOption = False) -> None:
    """Show how many answers and transform outputs are cached, and their size on disk."""
    from raggity.api.cache import cache_stats  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain, print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

    st = cache_stats(load(config))
    if json_out:
        print_json(out, asdict(st))
        return
    out.print(plain(f"cache:   {st.folder}"))
    out.print(f"entries: {st.entries}\nsize:    {st.bytes / 1e6:.2f} MB")


@cache_app.command("clear")
def clear(config: ConfigOption = None) -> None:
    """Delete every cached answer and transform output of this index."""
    from raggity.api.cache import clear_cache  # noqa: PLC0415 - deferred so `rag --help` stays instant

    removed = clear_cache(load(config))
    out.print(f"removed {removed} cached entr{'y' if removed == 1 else 'ies'}")
