"""How far the ingest bar's chunk estimate is off, replayed over a real folder.

    python -m bench.ingest_estimate FOLDER [FOLDER ...]

Every file of FOLDER is read and chunked as an ingest would (default chunking, no embedding), in
discovery order; then the estimate (raggity.pipeline.ingest.pace) is replayed with 2%, 5%, 10%, ...
of the bytes read (files in reading order), beside the single bytes-rate estimate it replaced, and
printed as the error against the chunks the folder really gives. Debian's git-doc (mixed .txt,
.html and .gz) and postgresql-doc-15 (HTML) are the folders the estimate was measured on.
"""

from __future__ import annotations

import sys
from pathlib import Path

from raggity.cli.progress import ANNOUNCE_AFTER_READ
from raggity.config.schema import Config
from raggity.documents.chunker import ChunkIdAllocator, ChunkingSettings, chunk_document
from raggity.documents.discover import discover
from raggity.documents.readers import read_file
from raggity.pipeline.ingest.pace import IngestPace, kind_of
from raggity.pipeline.model_loading import Models

FRACTIONS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5)


def file_chunks(folder: Path) -> list[tuple[str, int, int]]:
    """(path, bytes, chunks) of every file discovery finds, in its order; unreadable files give 0."""
    config = Config()
    tokenizer = Models(config).tokenizer
    settings = ChunkingSettings(config.ingest.chunk_tokens, config.ingest.parent_tokens)
    rows = []
    for path in discover([folder], config.ingest).files:
        chunks = 0
        try:
            ids = ChunkIdAllocator(str(path))
            for document in read_file(path, name=path):
                chunks += len(chunk_document(document, tokenizer, settings, start_ordinal=chunks, ids=ids))
        except Exception:  # a file the ingest would skip gives no chunks here either
            chunks = 0
        rows.append((str(path), path.stat().st_size, chunks))
    return rows


def replay(rows: list[tuple[str, int, int]]) -> None:
    total = sum(chunks for _, _, chunks in rows)
    planned: dict[str, int] = {}
    for source, size, _ in rows:
        planned[kind_of(source)] = planned.get(kind_of(source), 0) + size
    everything = sum(planned.values())
    print(f"{len(rows)} files, {everything:,} bytes, {total:,} chunks")
    for fraction in FRACTIONS:
        # Files in reading order until this share of the bytes is read: the share the ingest bar's
        # one-line announcement waits for (cli/progress.py ANNOUNCE_AFTER_READ) is one of these.
        pace = IngestPace(planned)
        files = 0
        for source, size, chunks in rows:
            if files and pace.bytes_read >= fraction * everything:
                break
            pace = pace.with_read(kind_of(source), size, chunks)
            files += 1
        by_kind = pace.chunks_expected or 0
        one_rate = round(pace.chunks_read * everything / max(pace.bytes_read, 1))
        print(
            f"  {fraction:4.0%} of the bytes read ({files} files): by kind {by_kind / total - 1:+.0%}, "
            f"one rate {one_rate / total - 1:+.0%}"
        )
    announce(rows, planned, total)


def announce(rows: list[tuple[str, int, int]], planned: dict[str, int], total: int) -> None:
    """The estimate where the bar's announcement can first be made: ANNOUNCE_AFTER_READ of the bytes
    read, and every kind with a sizable share of them sampled (IngestPace.kinds_sampled); beside it,
    the estimate at the bytes share alone (the rule before kinds_sampled)."""
    pace = IngestPace(planned)
    at_share: int | None = None
    for files, (source, size, chunks) in enumerate(rows, start=1):
        pace = pace.with_read(kind_of(source), size, chunks)
        if pace.bytes_read < ANNOUNCE_AFTER_READ * pace.bytes_total or not pace.chunks_expected:
            continue
        at_share = pace.chunks_expected if at_share is None else at_share
        if pace.kinds_sampled:
            print(
                f"  announced after {files} files: by kind {pace.chunks_expected / total - 1:+.0%} "
                f"(at {ANNOUNCE_AFTER_READ:.0%} of the bytes alone: {at_share / total - 1:+.0%})"
            )
            return


def main() -> None:
    for folder in sys.argv[1:]:
        print(folder)
        replay(file_chunks(Path(folder)))


if __name__ == "__main__":
    main()
