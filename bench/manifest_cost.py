"""What the manifest costs at N chunk ids (issue #45 item 3, the design measured before it is built):
today's JSON document against a Lance table of one row per file, on local disk. Synthetic: 16 chunks a
file, ids and hashes shaped like raggity's.

    PYTHONPATH=. nice -n 5 .venv/bin/python -m bench.manifest_cost [--ids 1000000] [--work /tmp/manifest_cost]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import time
from pathlib import Path
from typing import Any

from raggity.core.atomic_file import atomic_write_text
from raggity.store.manifest import Fingerprint, Manifest, SourceEntry, load_manifest

PER_FILE = 16


def _id(n: int) -> str:
    return hashlib.sha256(str(n).encode()).hexdigest()[:32]


def _rows(items: list[tuple[str, SourceEntry]]) -> Any:
    import pyarrow as pa  # noqa: PLC0415 - loads with lance

    return pa.table(
        {
            "source": [s for s, _ in items],
            "sha256": [e.sha256 for _, e in items],
            "size": [e.size for _, e in items],
            "mtime_ns": [e.mtime_ns for _, e in items],
            "chunk_ids": [list(e.chunk_ids) for _, e in items],
        }
    )


def _timed(step: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    found = step()
    return found, time.perf_counter() - started


def main() -> None:
    import lance  # noqa: PLC0415 - loads on first use

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--ids", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/raggity-manifest-cost"))
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    sources = {
        f"/home/user/corpus/dir{f % 100:03d}/file{f:07d}.md": SourceEntry(
            hashlib.sha256(str(f).encode()).hexdigest(),
            1000 + f,
            1_700_000_000_000_000_000 + f,
            tuple(_id(f * PER_FILE + k) for k in range(PER_FILE)),
        )
        for f in range(args.ids // PER_FILE)
    }
    manifest = Manifest(Fingerprint("bge-small", 256, 1024), sources)
    path = args.work / "manifest.json"
    _, save = _timed(lambda: atomic_write_text(path, manifest.to_json()))
    loaded, load = _timed(lambda: load_manifest(path))
    assert loaded.sources == sources
    print(
        f"json: {args.ids} ids in {len(sources)} files, {path.stat().st_size / 1e6:.1f} MB; "
        f"save (every batch and commit, whatever changed) {save:.2f} s, load {load:.2f} s"
    )
    uri = str(args.work / "sources.lance")
    _, first = _timed(lambda: lance.write_dataset(_rows(list(sources.items())), uri))

    def read_all() -> dict[str, SourceEntry]:
        table = lance.dataset(uri).to_table()
        columns = [table[c].to_pylist() for c in ("source", "sha256", "size", "mtime_ns", "chunk_ids")]
        return {s: SourceEntry(h, z, m, tuple(c)) for s, h, z, m, c in zip(*columns, strict=True)}

    back, full = _timed(read_all)
    assert back == sources
    stamps, stamp_s = _timed(
        lambda: lance.dataset(uri).to_table(columns=["source", "sha256", "size", "mtime_ns"]).num_rows
    )
    changed = next(iter(sources))
    entry = SourceEntry("0" * 64, 1, 2, tuple(_id(-k) for k in range(PER_FILE)))

    def one_file() -> None:
        lance.dataset(uri).delete(f"source = '{changed}'")
        lance.write_dataset(_rows([(changed, entry)]), uri, mode="append")

    _, change = _timed(one_file)
    size = sum(p.stat().st_size for p in Path(uri).rglob("*") if p.is_file())
    print(
        f"table: first write {first:.2f} s, {size / 1e6:.1f} MB; load every row {full:.2f} s; the per-file "
        f"stamps alone (what a no-op plan reads) {stamp_s:.2f} s for {stamps} files; one changed file {change:.3f} s"
    )
    shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
