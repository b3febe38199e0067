"""`rag graph-build` and `rag graph stats|show`: the entity graph behind [retrieval] graph."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from raggity.cli.shared import ConfigOption, JsonOption, err, load, out, utf8_text
from raggity.cli.visible import visible

graph_app = typer.Typer(help="Inspect the entity graph built by `rag graph-build`.", no_args_is_help=True)


def graph_build(
    config: ConfigOption = None,
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for a running ingest.", min=0)] = 0.0,
    json_out: JsonOption = False,
) -> None:
    """Extract entities and relations from every chunk not yet in the graph (one LLM call each).

    Incremental and resumable: interrupt it any time; the next run continues where it stopped."""
    from raggity.api.graph import graph_build as build  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.progress import RichGraphProgress  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain  # noqa: PLC0415 - deferred so `rag --help` stays instant

    cfg = load(config)
    with RichGraphProgress(err if json_out else out) as progress:
        report = build(cfg, progress=progress, wait_seconds=wait)
    if json_out:
        from dataclasses import asdict  # noqa: PLC0415 - deferred so `rag --help` stays instant

        from raggity.cli.render import print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

        print_json(out, {**asdict(report), "graph": str(report.graph)})
        return
    out.print(
        Text.assemble(
            ("done", "bold"),
            f" in {report.seconds:.1f}s: {report.extracted} chunks extracted"
            + (f" ({report.seconds_per_chunk:.2f}s/chunk)" if report.extracted else "")
            + f", {report.unchanged} unchanged, {report.removed} removed"
            + (f", {report.unparsed} unparseable replies" if report.unparsed else "")
            + f"; graph has {report.nodes} entities and {report.edges} relations",
        )
    )
    out.print(plain(f"graph: {report.graph}"))


@graph_app.command("stats")
def stats(
    config: ConfigOption = None,
    top: Annotated[int, typer.Option("--top", help="How many entities to list.", min=0)] = 10,
    json_out: JsonOption = False,
) -> None:
    """Entities, relations, coverage, and the entities mentioned by the most chunks."""
    from raggity.api.graph import graph_stats  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import plain  # noqa: PLC0415 - deferred so `rag --help` stays instant

    result = graph_stats(load(config), top=top)
    if json_out:
        from dataclasses import asdict  # noqa: PLC0415 - deferred so `rag --help` stays instant

        from raggity.cli.render import print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

        print_json(out, {**asdict(result), "path": str(result.path)})
        return
    if not result.exists:
        out.print(plain(f"no entity graph at {result.path}; run `rag graph-build`"))
        return
    out.print(
        plain(
            f"{result.nodes} entities, {result.edges} relations; "
            f"{result.chunks_processed}/{result.chunks_live} chunks extracted"
            + (f" by {result.generator}" if result.generator else "")
        )
    )
    if result.top:
        table = Table(show_header=True, header_style="bold")
        for column in ("entity", "type", "chunks"):
            table.add_column(column)
        for e in result.top:
            table.add_row(plain(e.name), plain(e.type), str(e.chunks))
        out.print(table)


@graph_app.command("show")
def show(
    entity: Annotated[
        str, typer.Argument(help="An entity name (case and plural do not matter).", callback=utf8_text)
    ],
    config: ConfigOption = None,
    limit: Annotated[int, typer.Option("--limit", help="Most chunks to list.", min=1)] = 20,
    json_out: JsonOption = False,
) -> None:
    """An entity's relations, and the chunks that mention it with their source and location."""
    from raggity.api.graph import show_entity  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import display_path, plain  # noqa: PLC0415 - deferred so `rag --help` stays instant

    view = show_entity(load(config), entity, limit=limit)
    if json_out:
        from dataclasses import asdict  # noqa: PLC0415 - deferred so `rag --help` stays instant

        from raggity.cli.render import print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

        data = asdict(view)
        for mention, m in zip(data["mentions"], view.mentions, strict=True):
            mention["location"] = str(m.location)
        print_json(out, data)
        return
    out.print(
        Text.assemble(Text(visible(view.name), style="bold"), plain(f" ({view.type})" if view.type else ""))
    )
    if view.relations:
        out.print("relations:")
        for r in view.relations:
            out.print(
                plain(f"  {r.subject} —{r.relation}→ {r.object}" + (f"  ×{r.chunks}" if r.chunks > 1 else ""))
            )
    else:
        out.print("relations: none")
    out.print(f"mentioned in {len(view.mentions)} chunk(s):")
    for m in view.mentions:
        snippet = " ".join(m.text.split())[:100]
        out.print(plain(f"  {m.location.cite(display_path(m.source))}  {snippet}"))
