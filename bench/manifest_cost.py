"""What the manifest costs at N chunk ids (issue #45 item 3): the format-2 JSON document that listed
every record, against the built sources table (store/sources_table.py) through the local store's own
code: LocalIndexWriter's save (the commit point of a batch and of an ingest), its open (what an ingest
starts from), the plan of a no-op ingest, and what readers load. Synthetic: 16 chunks a file, ids and
hashes shaped like raggity's, on local disk; with --s3, the object store's part of a commit and its
reader too, against a moto server. Not timed: the chunk table and Tantivy, which a real no-op ingest
also reads (their ids, for its repair step).

    PYTHONPATH=. nice -n 5 .venv/bin/python -m bench.manifest_cost [--ids 1000000] [--s3] [--work /tmp/manifest_cost]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from bench.child import run_child
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


# A reader in a new process: the manifest and its live-id set, what a search holds.
_READER = """
import json, resource, sys, tempfile, time
from pathlib import Path
import lance, pyarrow
from raggity.store.manifest import load_manifest
# Lance's runtime started, as in any reader of an index (it opens the chunk table too).
lance.write_dataset(pyarrow.table({"a": [1]}), tempfile.mkdtemp() + "/warm.lance").to_table()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
began = time.perf_counter()
live = frozenset(load_manifest(Path(sys.argv[1])).live_ids())
seconds = time.perf_counter() - began
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps({"ids": len(live), "load_and_live_ids_s": seconds, "peak_rss_growth_mb": grown}))
"""


def _reader_process(manifest: Path) -> dict[str, Any]:
    """A new process's load of `manifest` with its records: time and peak RSS growth (forked by
    bench/child.py's launcher, so the growth is the reader's own)."""
    done = run_child([sys.executable, "-c", _READER, str(manifest)], cwd=Path(__file__).resolve().parents[1])
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def _unread(*_: object) -> Any:
    raise AssertionError("a no-op plan reads no file")


def _on_s3(
    sources: dict[str, SourceEntry], changed: dict[str, SourceEntry], fingerprint: Fingerprint
) -> dict[str, float]:
    """The same records through the object store's part of a commit (SourcesWriter.write and
    compact, as ObjectStoreIndexWriter.commit calls them) and its readers (committed_manifest), on a
    moto server in this process: its requests share this process's cores, so the times are upper
    bounds."""
    import boto3  # noqa: PLC0415 - the scale extra
    from moto.server import ThreadedMotoServer  # noqa: PLC0415 - the test extra's server

    from raggity.store.object_commit import committed_manifest  # noqa: PLC0415
    from raggity.store.sources_table import SourcesWriter, beside  # noqa: PLC0415

    for name, value in {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"}.items():
        os.environ.setdefault(name, value)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="bench")
        options = {"endpoint": endpoint, "region": "us-east-1", "allow_http": "true"}
        table = "s3://bench/index/lancedb/chunks.lance"
        figures: dict[str, float] = {}

        def commit(writer: SourcesWriter, records: dict[str, SourceEntry]) -> int | None:
            writer.write(records)
            return writer.compact()

        writer = SourcesWriter(beside(table), options)
        version, figures["first_commit_s"] = _timed(lambda: commit(writer, sources))
        text = Manifest(fingerprint, sources).header_json(version)
        loaded, figures["reader_load_s"] = _timed(lambda: committed_manifest(text, table, options, "bench"))
        assert loaded.sources == sources
        writer = SourcesWriter(beside(table), options)
        _, figures["writer_start_s"] = _timed(lambda: writer.start(version, loaded.sources))
        _, figures["noop_commit_s"] = _timed(lambda: commit(writer, loaded.sources))
        _, figures["one_file_commit_s"] = _timed(lambda: commit(writer, changed))
        return figures
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--ids", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/raggity-manifest-cost"))
    parser.add_argument("--s3", action="store_true", help="also through a moto S3 server in this process")
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
    figures: dict[str, Any] = {"ids": args.ids, "files": len(sources), "load": list(os.getloadavg())}

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
    for name, where in (("json", path), ("table", layout.manifest)):
        figures[f"{name}_reader_process"] = _reader_process(where)
    if args.s3:
        figures["s3"] = _on_s3(sources, manifest.sources, fingerprint)
    print(json.dumps(_rounded(figures), indent=1))
    shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
