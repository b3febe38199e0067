"""Find the files to ingest under the given roots, and say why any that look readable are skipped.

Folders are walked with an explicit stack (no recursion limit, no hang on symlink loops). In every
folder the ignore files named by ingest.ignore_files apply with gitignore semantics relative to that
folder; ingest.include and ingest.exclude globs apply to paths relative to the root. Parent folders
of a root are not consulted: the root's own ignore files are the outermost.

Paths are returned absolute: the root with its symlinks resolved, then the path below it as found,
so a file reached through a link keeps the link's name. When one file is reachable by several paths
(links inside the root), it is listed once, preferably under a path that is not a link. Files named
directly as roots are always taken if raggity can read their type; ignore rules and globs are for
what a walk finds.

A walk also leaves out, by default, and reports as "excluded" (with the reason, not as a failure):
hidden files and folders and credential files (raggity.documents.private_files), and generated,
minified and vendored files (raggity.documents.generated). raggity's own index folder is never read,
whatever its name and wherever it is. A name that is not valid UTF-8 cannot be stored in the index:
it is skipped, reported with its undecodable bytes shown as escapes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from pathspec import GitIgnoreSpec

from raggity.config.schema import IngestConfig
from raggity.core.errors import ConfigError
from raggity.documents.discovery_result import Discovery, Found, SkippedFile
from raggity.documents.folder_walk import (
    BAD_NAME,
    INSIDE_INDEX,
    JUNK_FOLDERS,
    Folder,
    Walk,
    is_supported,
    valid_name,
)
from raggity.documents.ignore import IgnoreRules, compile_globs
from raggity.documents.page_sources import PAGE_SOURCE
from raggity.documents.private_files import HIDDEN, is_hidden

# Callers import these from here, the door to discovery.
__all__ = [
    "BAD_NAME",
    "INSIDE_INDEX",
    "JUNK_FOLDERS",
    "LINKED",
    "NOT_ABSOLUTE",
    "PAGE_SOURCE",
    "Discovery",
    "SkippedFile",
    "discover",
    "is_supported",
    "recheck",
    "valid_name",
]


def discover(roots: Sequence[Path], config: IngestConfig, *, index_dir: Path | None = None) -> Discovery:
    """Every file to read under `roots` (files or folders), sorted and without duplicates.

    `index_dir`: raggity's index folder, never read as documents.
    """
    found = Found()
    include = _compile_globs(config.include, "ingest.include")
    exclude = _compile_globs(config.exclude, "ingest.exclude")
    index_real = os.path.realpath(index_dir) if index_dir is not None else None
    walks = []
    for root in roots:
        if not valid_name(str(root)):
            found.skip(str(root), str(root), BAD_NAME)
            continue
        walk = Walk(root, config, include, exclude, found, index_real)
        walk.run()
        walks.append(walk)
    # After every root: `rag ingest rst/ html/` reads the pages after the walk that found their sources.
    for walk in walks:
        walk.settle_page_sources()
    return found.result()


LINKED = "reached through a symlink"
NOT_ABSOLUTE = "not an absolute path"


def recheck(paths: Sequence[Path], config: IngestConfig, *, index_dir: Path | None = None) -> Discovery:
    """Which of `paths`, files an index lists from earlier runs, a walk would still take: each goes
    through the very checks a walk applies to a file it finds (type, name, credentials, hidden,
    generated, size, readable, regular file, not raggity's index), with its own folder as the root.
    No walk vouches for the folders above it, so none of them may be hidden or raggity's, and no part
    of the path may be a link. An index folder may come with a cloned repository: what its manifest
    lists is data to check, not files to read (see docs/ingestion.md, "Rebuilds")."""
    found = Found()
    index_real = os.path.realpath(index_dir) if index_dir is not None else None
    walks = []
    for path in paths:
        given = str(path)
        if not valid_name(given):
            found.skip(given, given, BAD_NAME)
            continue
        if not path.is_absolute():
            found.skip(given, given, NOT_ABSOLUTE)
            continue
        real = os.path.realpath(path)
        if real != os.path.normpath(given):
            found.skip(real, given, LINKED)
            continue
        folder = os.path.dirname(real)
        above = Path(folder).parts[1:]
        if any(part in JUNK_FOLDERS for part in above):
            found.exclude(real, given, INSIDE_INDEX if ".raggity" in above else HIDDEN)
            continue
        if not config.include_hidden and any(is_hidden(part) for part in above):
            found.exclude(real, given, HIDDEN)
            continue
        walk = Walk(Path(folder), config, None, None, found, index_real)
        rules = walk.with_ignore_files(Folder(folder, folder, "", IgnoreRules(), via_link=False)).rules
        walk.visit_file(
            Folder(folder, folder, "", rules, via_link=False), real, real, path.name, None, via_link=False
        )
        walks.append(walk)
    for walk in walks:
        walk.settle_page_sources()
    return found.result()


def _compile_globs(globs: Sequence[str], key: str) -> GitIgnoreSpec | None:
    if not globs:
        return None
    try:
        return compile_globs(globs)
    except (ValueError, re.error) as exc:
        raise ConfigError(f"{key}: invalid glob: {exc}", "use gitignore-style patterns") from exc
