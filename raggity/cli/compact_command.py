"""`rag compact`: delete the index's old versions that no reader can still be reading."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer

from raggity.cli.shared import ConfigOption, JsonOption, load, out


def compact_command(
    config: ConfigOption = None,
    keep: Annotated[
        float | None,
        typer.Option(
            "--keep",
            help="Seconds a replaced version stays for readers that may still read it "
            "(default: [index] keep_versions_seconds, 600). 0 deletes every old version at once: only "
            "when nobody is searching this index.",
            min=0,
        ),
    ] = None,
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for a running ingest.", min=0)] = 0.0,
    json_out: JsonOption = False,
) -> None:
    """Free the space of old index versions: delete the versions replaced more than [index]
    keep_versions_seconds ago (with the files only they use), old manifests on object storage, and
    the keyword index's unused files; a local index's small table fragments are merged first.

    A search, `rag ask` or `rag mcp` that opened an older version keeps reading it until the window
    has passed; the version readers open now is never deleted. Takes the index's writer lock (the
    lease on object storage), so it waits for or refuses a running ingest like a second ingest would.
    An ingest already does the same after it commits while [index] compact_after_ingest is on (the
    default), so this is for an index that grew before that, or to reclaim space sooner with --keep.
    """
    from raggity.api.compact import compact_index  # noqa: PLC0415 - deferred so `rag --help` stays instant
    from raggity.cli.render import print_json  # noqa: PLC0415 - deferred so `rag --help` stays instant

    report = compact_index(load(config), keep_seconds=keep, wait_seconds=wait)
    if json_out:
        print_json(out, asdict(report))
        return
    out.print(
        f"removed {report.versions_removed} old version{'' if report.versions_removed == 1 else 's'} "
        f"({report.bytes_removed / 1e6:.2f} MB) and {report.manifests_removed} old "
        f"manifest{'' if report.manifests_removed == 1 else 's'}; {report.versions_kept} kept"
    )
    if report.held_back:
        out.print(f"kept every older version: {report.held_back}; run it again once that has passed")
