"""Ingest of a real documentation folder as `rag ingest` runs it: wall time, chunks/s, tokens/s and
peak RSS of the child process. The folder is RAGGITY_BENCH_DOCS, or Debian's PostgreSQL 15 HTML
manual (apt-get install postgresql-doc-15) when that is installed."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from bench.child import run_child

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DOCS = Path("/usr/share/doc/postgresql-doc-15/html")
# The installed `rag` script runs the installed checkout; this runs the one on PYTHONPATH/cwd.
CLI = "from raggity.cli.main import run; run()"


def docs_folder() -> Path | None:
    """The folder to measure, or None when it does not exist on this machine."""
    configured = os.environ.get("RAGGITY_BENCH_DOCS")
    folder = Path(configured) if configured else DEFAULT_DOCS
    return folder if folder.is_dir() else None


def ingest_folder(folder: Path, work: Path, *, code: Path = ROOT) -> dict[str, Any]:
    """A fresh index of `folder` built by the raggity checkout at `code`, measured from outside."""
    index = work / "index"
    config = work / "raggity.toml"
    work.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[index]\npath = "{index}"\n', encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(code))
    run = run_child(
        [sys.executable, "-c", CLI, "--config", str(config), "ingest", str(folder)], cwd=code, env=env
    )
    chunks, tokens = index_totals(index / "lancedb" / "chunks.lance")
    return {
        "folder": str(folder),
        "chunks": chunks,
        "tokens": tokens,
        "wall_seconds": run.wall_seconds,
        "chunks_per_s": chunks / run.wall_seconds,
        "tokens_per_s": tokens / run.wall_seconds,
        "peak_rss_mb": run.peak_rss_mb,
    }


def index_totals(table: Path) -> tuple[int, int]:
    """Chunks in the index and the tokens they hold (as counted for chunking: the embedded text)."""
    import lance  # noqa: PLC0415 - each measurement imports what it measures

    column = lance.dataset(str(table)).to_table(columns=["n_tokens"])["n_tokens"]
    return len(column), int(sum(column.to_pylist()))
