"""`rag show CITATION_OR_CHUNK_ID`: print the text a citation points at, with its location."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from raggity.cli.shared import ConfigOption, JsonOption, load, out
from raggity.cli.visible import visible


def show_command(
    reference: Annotated[
        str,
        typer.Argument(
            help="A chunk id from `rag search --json`, or a citation as printed: "
            "PATH:lines 3-9, PATH#anchor, PATH:page 2, a named place "
            "(deck.pptx:slide 7, costs.xlsx:Costs!A14:D30, analysis.ipynb:cell 12), or PATH.",
            show_default=False,
        ),
    ],
    config: ConfigOption = None,
    json_out: JsonOption = False,
) -> None:
    """Print the indexed text a citation or chunk id points at, with its location and heading trail."""
    from raggity.api.show import show_in_config_index  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import display_path, print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

    chunks = show_in_config_index(load(config), reference, printed=visible)
    if json_out:
        print_json(
            out,
            [
                {
                    "id": c.id,
                    "source": c.source,
                    "location": str(c.location),
                    "citation": c.location.cite(c.source),
                    "heading": c.heading,
                    "text": c.text,
                }
                for c in chunks
            ],
        )
        return
    for k, chunk in enumerate(chunks):
        if k:
            out.print()
        header = Text(visible(chunk.location.cite(display_path(chunk.source))), style="bold")
        if chunk.heading:
            header.append(f"  ({visible(chunk.heading)})", style="dim")
        header.append(f"  {chunk.id}", style="dim")
        out.print(header)
        # Text, not markup: "[red]" or "[/x]" in a document is printed as written.
        out.print(Text(visible(chunk.text.strip("\n"), keep_newlines=True)))
