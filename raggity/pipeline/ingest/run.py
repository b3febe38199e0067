"""What one `rag ingest` reads, the same over an index folder and an index on object storage: the
files discovered under the request's folders and, over a rebuild, other folders' files carried over.
Indexer.ingest takes the store's writer lock around both and brings the index in step (sync.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from raggity.config.schema import IngestConfig
from raggity.documents.discover import Discovery, discover, recheck
from raggity.documents.readers.source import os_error_reason
from raggity.pipeline.ingest.reading import open_source
from raggity.pipeline.ingest.report import Skipped
from raggity.pipeline.ingest.sources import SourceFile, SourceNames
from raggity.store.index_seam import Manifest


@dataclass(frozen=True)
class IngestRequest:
    """What to ingest and how: absolute roots, and the options of `rag ingest`."""

    roots: tuple[Path, ...]
    rebuild: bool = False
    strict: bool = False
    wait_seconds: float = 0.0
    # "local" or "ray"; None: [ingest] engine. ray_address None: [ingest] ray_address.
    engine: str | None = None
    ray_address: str | None = None


def discovered(
    roots: Sequence[Path], names: SourceNames, settings: IngestConfig, *, index_dir: Path
) -> tuple[list[SourceFile], list[Skipped], Discovery]:
    """The files under `roots` as sources, those that could not be opened, and the discovery (for
    what it skipped and excluded). `index_dir` is never walked into."""
    found = discover(roots, settings, index_dir=index_dir)
    skipped = [Skipped(s.path, s.reason) for s in found.skipped]
    sources: list[SourceFile] = []
    for path in found.files:
        opened = open_source(path, name=names.name(path), real=found.real_paths.get(path), settings=settings)
        if isinstance(opened, Skipped):
            skipped.append(opened)
        else:
            sources.append(opened)
    return sources, skipped, found


def carried_over(
    manifest: Manifest,
    in_scope: Callable[[str], bool],
    names: SourceNames,
    settings: IngestConfig,
    *,
    index_dir: Path,
) -> tuple[list[SourceFile], list[Skipped]]:
    """A rebuild empties the whole index, so files indexed from other folders are indexed again
    with the new settings instead of silently disappearing: those that discovery would still
    take (discover.recheck) and that still hold the content the index recorded for them. The
    manifest may come with a cloned repository: a file it names that the index never held (its
    digest cannot be known to whoever wrote it) is not read. Returns the sources, and the files
    left out with the reason."""
    # Each file as it stands on this machine, and the name the index records it by.
    others = {names.path(s): s for s in manifest.sources if not in_scope(s)}
    checked = recheck(list(others), settings, index_dir=index_dir)
    dropped = [
        Skipped(others.get(Path(s.path), s.path), f"{NOT_CARRIED}: {s.reason}")
        for s in (*checked.skipped, *checked.excluded)
    ]
    sources = []
    for path in checked.files:
        name = others[path]
        entry = manifest.sources[name]
        opened = open_source(path, name=name, real=str(path), settings=settings)
        try:
            if isinstance(opened, Skipped):
                dropped.append(Skipped(name, f"{NOT_CARRIED}: {opened.reason}"))
            elif opened.size == entry.size and opened.digest() == entry.sha256:
                sources.append(opened)
            else:
                dropped.append(Skipped(name, f"{NOT_CARRIED}: {CHANGED_SINCE_INDEXED}"))
        except OSError as exc:
            dropped.append(Skipped(name, f"{NOT_CARRIED}: {os_error_reason(exc)}"))
    taken = {s.source for s in sources} | {s.source for s in dropped}
    dropped += [Skipped(n, f"{NOT_CARRIED}: {NOT_TAKEN}") for n in others.values() if n not in taken]
    return sources, dropped


# A carried-over file is read again only with the content the index held: one edited since is indexed
# when its folder is ingested again.
NOT_CARRIED = "not carried over the rebuild"
CHANGED_SINCE_INDEXED = "changed since it was indexed (ingest its folder again)"
NOT_TAKEN = "not a file `rag ingest` reads there"
