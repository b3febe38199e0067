"""What the manifest costs at N chunk ids (issue #45 item 3): the format-2 JSON document that listed
every record, against the built sources table (store/sources_table.py) through the local store's own
code: LocalIndexWriter's save (the commit point of a batch and of an ingest), its open (what an ingest
starts from), the plan of a no-op ingest, and what readers load. Synthetic: 16 chunks a file, ids and
hashes shaped like raggity's, on local disk. Not timed: the chunk table and Tantivy, which a real
no-op ingest also reads (their ids, for its repair step).

    PYTHONPATH=. nice -n 5 .venv/bin/python -m bench.manifest_cost [--ids 1000000] [--work /tmp/manifest_cost]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from raggity.core.atomic_file import atomic_write_text
from raggity.pipeline.ingest.plan import plan_ingest
from raggity.pipeline.ingest.sources import SourceFile
from raggity.store.layout import IndexLayout
from raggity.store.local_index import LocalIndexWriter
from raggity.store.manifest import Fingerprint, Manifest, SourceEntry, load_header, load_manifest

PER_FILE = 16


def _id(n: int) -> str:
    return hashlib.sha256(str(n).encode()).hexdigest()[:32]


def _timed(step: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    found = step()
    return found, time.perf_counter() - started


def _size(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def _unread(*_: object) -> Any:
    raise AssertionError("a no-op plan reads no file")


def main() -> None:
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
    fingerprint = Fingerprint("bge-small", 256, 1024)
    figures: dict[str, Any] = {"ids": args.ids, "files": len(sources), "load": os.getloadavg()}

    # Format 2: the whole document is written at every save and read whole.
    path = args.work / "json" / "manifest.json"
    path.parent.mkdir()
    _, figures["json_save_s"] = _timed(
        lambda: atomic_write_text(path, Manifest(fingerprint, sources).to_json())
    )
    loaded, figures["json_load_s"] = _timed(lambda: load_manifest(path))
    assert loaded.sources == sources
    figures["json_mb"] = path.stat().st_size / 1e6

    # The sources table, through the local store's writer.
    layout = IndexLayout(args.work / "index")
    layout.root.mkdir()
    writer = LocalIndexWriter(layout, 384, "en_stem", None)
    writer.open(rebuild=True)
    _, figures["first_save_s"] = _timed(lambda: writer.save(Manifest(fingerprint, dict(sources))))
    figures["table_mb"], figures["header_bytes"] = _size(layout.sources), layout.manifest.stat().st_size
    loaded, figures["reader_load_s"] = _timed(lambda: load_manifest(layout.manifest))
    assert loaded.sources == sources
    header, figures["header_load_s"] = _timed(lambda: load_header(layout.manifest))
    assert (header.files, header.chunks) == (len(sources), args.ids)

    # The next ingest: open at the last commit, plan against unchanged files, save.
    writer = LocalIndexWriter(layout, 384, "en_stem", None)
    manifest, figures["ingest_open_s"] = _timed(lambda: writer.open(rebuild=False))
    files = [SourceFile(s, e.size, e.mtime_ns, _unread, _unread) for s, e in sources.items()]
    plan, figures["noop_plan_s"] = _timed(lambda: plan_ingest(files, lambda _: True, manifest))
    assert (plan.todo, plan.unchanged) == ([], len(sources))
    version = header.sources_version
    _, figures["noop_save_s"] = _timed(lambda: writer.save(manifest))
    assert load_header(layout.manifest).sources_version == version  # no row written
    changed = next(iter(sources))
    manifest.sources[changed] = SourceEntry("0" * 64, 1, 2, tuple(_id(-k) for k in range(PER_FILE)))
    _, figures["one_file_save_s"] = _timed(lambda: writer.save(manifest))
    assert load_manifest(layout.manifest).sources == manifest.sources
    figures["noop_ingest_manifest_s"] = (
        figures["ingest_open_s"] + figures["noop_plan_s"] + figures["noop_save_s"]
    )
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in figures.items()}, indent=1))
    shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
