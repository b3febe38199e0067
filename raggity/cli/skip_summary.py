"""The ingest summary's account of what was not indexed: one line per reason, with a count."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from rich.text import Text

from raggity.api import Skipped
from raggity.cli.render import display_path
from raggity.cli.visible import visible

# A reason shared by this many entries or fewer names them; more get a count only (--verbose lists all).
NAMED_UP_TO = 3


def skip_summary(skipped: Sequence[Skipped], excluded: Sequence[Skipped], *, verbose: bool) -> list[Text]:
    """Lines such as "skipped 20000 files: no text", "left out 3 folders: hidden (...)"; paths and
    reasons are data, shown with visible().

    Skipped entries could not be read; excluded ones were left out by a default rule. Each reason is
    one line; its paths follow, indented, when there are few of them or `verbose` is set.
    """
    lines: list[Text] = []
    for verb, entries in (("skipped", skipped), ("left out", excluded)):
        by_reason: dict[str, list[str]] = defaultdict(list)
        for entry in entries:
            by_reason[entry.reason].append(entry.source)
        for reason, sources in sorted(by_reason.items(), key=lambda item: (-len(item[1]), item[0])):
            lines.append(Text.assemble((verb, "yellow"), f" {_count(sources)}: {visible(reason)}"))
            if verbose or len(sources) <= NAMED_UP_TO:
                lines.extend(Text(f"  '{visible(_shown(source))}'") for source in sorted(sources))
            elif sources:
                lines.append(Text("  (rag ingest --verbose lists them; --json gives every path and reason)"))
    return lines


def _count(sources: Sequence[str]) -> str:
    """ "1 file", "3 folders", "2 folders and 1 file": folder entries end in "/"."""
    folders = sum(1 for source in sources if source.endswith("/"))
    files = len(sources) - folders
    parts = [f"{n} {noun}{'s' if n != 1 else ''}" for n, noun in ((folders, "folder"), (files, "file")) if n]
    return " and ".join(parts)


def _shown(source: str) -> str:
    shown = display_path(source.rstrip("/"))
    return shown + "/" if source.endswith("/") else shown
