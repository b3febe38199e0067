"""A no-op re-ingest at scale (issue #45, item 3: "a no-op re-ingest of 1M chunks takes seconds"): a
folder of real files whose chunks the index already holds, and `rag ingest FOLDER` run again on it,
timed from outside with its peak RSS, for each tree given by --code (taking turns, one run).

    PYTHONPATH=. nice -n 5 .venv/bin/python -m bench.noop_ingest --chunks 1000000 [--work DIR]
        [--code TREE ...] [--runs 3] [--out bench/results/noop_ingest.json]

The index is built once through raggity's own ingest (the reader, chunker, writer and commit a user's
ingest runs), with vectors from a stand-in embedder that claims the real embedder's identity (seeded
random unit vectors): a no-op ingest embeds nothing, and a million real embeddings take hours on 2
cores. `rag ingest` with the real models then finds an index of its own. Files hold SciFact passages of
about a chunk each (FILE_PASSAGES per file), their modification times a day old, so that no file's
stamp is too recent to trust and every file is unchanged. The folder and index stay under --work for a
rerun (delete it to build anew).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.child import run_child
from bench.scale_index import passages

ROOT = Path(__file__).resolve().parent.parent
FILE_PASSAGES = 16  # passages of ~1,000 characters per file: about 16 chunks at chunk_tokens = 256
FOLDER_FILES = 1000  # files per subfolder
_RAG = "from raggity.cli.main import run; run()"  # the CLI, from the tree first on PYTHONPATH


@dataclass(frozen=True)
class StandInEmbedder:
    """The real embedder's identity and width, with seeded random unit vectors for texts."""

    identity: str
    dim: int
    _rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(45))

    def embed(self, texts: Sequence[str]) -> Any:
        block = self._rng.normal(size=(len(texts), self.dim)).astype(np.float32)
        return block / np.linalg.norm(block, axis=1, keepdims=True)


def write_files(docs: Path, files: int) -> None:
    """`files` Markdown files of FILE_PASSAGES passages each, every file a different mix."""
    texts = passages(4096)
    aged = time.time() - 86_400
    for n in range(files):
        folder = docs / f"part{n // FOLDER_FILES:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(
            f"## Section {k}\n\n{texts[(n * 7 + k * 131) % len(texts)]}" for k in range(FILE_PASSAGES)
        )
        path = folder / f"note{n:06d}.md"
        path.write_text(f"# Note {n}\n\n{body}\n", encoding="utf-8")
        os.utime(path, (aged, aged))


def build(work: Path, chunks: int) -> dict[str, Any]:
    """The folder and its index, through raggity's ingest with the stand-in embedder."""
    from raggity.api.session import Raggity  # noqa: PLC0415 - the bench's parent imports it once
    from raggity.config.loader import load_config  # noqa: PLC0415
    from raggity.pipeline.model_loading import embedder_identity, load_embedder  # noqa: PLC0415

    docs, config_path = work / "docs", work / "raggity.toml"
    config_path.write_text('[index]\npath = "index"\n', encoding="utf-8")
    began = time.perf_counter()
    write_files(docs, max(1, chunks // FILE_PASSAGES))
    written = time.perf_counter() - began
    config = load_config(config_path)
    stand_in = StandInEmbedder(embedder_identity(config), load_embedder(config).dim)
    began = time.perf_counter()
    report = Raggity(config, embedder=stand_in).ingest([docs])
    return {
        "files_written_s": round(written, 1),
        "ingest_s": round(time.perf_counter() - began, 1),
        "files": report.added,
        "chunks": report.chunks_written,
    }


def noop_ingest(work: Path, tree: Path | None) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, what its summary line says it did) of one `rag ingest docs`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    argv = [sys.executable, "-c", _RAG, "--config", str(work / "raggity.toml"), "ingest", str(work / "docs")]
    done = run_child(argv, cwd=work, env=env)
    said = next((line for line in done.stdout.splitlines() if line.startswith("done in")), done.stdout)
    # Its own timing ("done in 1.1s") differs run by run: kept apart from what it did.
    return done.wall_seconds, done.peak_rss_mb, said.partition(": ")[2] or said


def measure(work: Path, trees: list[Path | None], runs: int) -> dict[str, Any]:
    """Each tree's no-op ingests, the trees taking turns so that a change of load falls on all."""
    for tree in trees:  # untimed: byte-code written, the index in the page cache
        noop_ingest(work, tree)
    found: dict[Path | None, list[tuple[float, float, str]]] = {tree: [] for tree in trees}
    for _ in range(runs):
        for tree in trees:
            found[tree].append(noop_ingest(work, tree))
    return {
        str(tree or "this checkout"): {
            "wall_s_median": round(statistics.median(w for w, _, _ in runs_of), 2),
            "wall_s_min": round(min(w for w, _, _ in runs_of), 2),
            "peak_rss_mb_max": max(r for _, r, _ in runs_of),
            "said": sorted({line for _, _, line in runs_of}),
        }
        for tree, runs_of in found.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000, help="about how many chunks to index")
    parser.add_argument("--work", type=Path, default=Path("/tmp/raggity-noop-ingest"))
    parser.add_argument("--code", type=Path, action="append", default=[], help="a tree to time (repeat)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/noop_ingest.json")
    args = parser.parse_args()
    work = args.work.resolve()
    built: dict[str, Any] = {"reused": str(work)}
    if not (work / "index").exists():
        work.mkdir(parents=True, exist_ok=True)
        built = build(work, args.chunks)
    began = os.getloadavg()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], check=False, cwd=ROOT, capture_output=True, text=True
    )
    measured = measure(work, [tree.resolve() for tree in args.code] or [None], args.runs)
    machine = {
        "cores": os.cpu_count(),
        "load_average_at_start": began,
        "load_average_at_end": os.getloadavg(),
    }
    results = {"commit": commit.stdout.strip(), "machine": machine, "built": built, "noop_ingest": measured}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
