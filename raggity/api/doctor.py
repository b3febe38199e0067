"""Health checks behind `rag doctor`: each problem comes with the command or edit that fixes it."""

from __future__ import annotations

from dataclasses import dataclass

from raggity.api.status import device_placements, index_status, model_statuses
from raggity.api.thresholds import answer_thresholds
from raggity.config.schema import Config
from raggity.core.errors import RaggityError
from raggity.store.bm25_index import Bm25Reader
from raggity.store.health import check_index
from raggity.store.ingest_lock import running_writer
from raggity.store.layout import IndexLayout
from raggity.store.rebuild_state import rebuild_notice
from raggity.store.vector_table import VectorTableReader


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    message: str
    fix: str = ""
    severity: str = "error"  # "error" fails doctor; "warning" does not


def run_checks(config: Config) -> list[Check]:
    checks = [
        Check(
            "config",
            True,
            str(config.source) if config.source else "no raggity.toml found; using defaults",
            "" if config.source else "run `rag init` to write one",
            "warning" if not config.source else "error",
        )
    ]
    for model in model_statuses(config):
        if model.present:
            checks.append(
                Check(
                    f"model: {model.role}",
                    True,
                    f"{model.name} {model.path} sha256 {model.sha256[:12]}"
                    if model.path
                    else f"{model.name}: {model.note}",
                )
            )
        else:
            severity = "warning" if model.role == "reranker" else "error"
            checks.append(
                Check(f"model: {model.role}", False, f"{model.name} not available", model.note, severity)
            )
    checks.extend(Check(f"device: {p.role}", p.ok, f"{p.device}: {p.why}") for p in device_placements(config))
    from raggity.api.generator_check import generator_checks  # noqa: PLC0415 - it imports this module's Check

    checks.extend(generator_checks(config))
    thresholds = answer_thresholds(config)
    checks.append(
        Check(
            "answer thresholds",
            True,
            thresholds.summary,
            "run `rag calibrate`" if thresholds.origin == "default" else "",
            "warning",
        )
    )
    checks.extend(_index_checks(config))
    return checks


def _remote_index_checks(config: Config) -> list[Check]:
    """CURRENT checked as every command checks it; the stores' agreement is not checked yet."""
    try:
        status = index_status(config)
    except RaggityError as exc:
        return [Check("index", False, exc.message, exc.hint)]
    if not status.exists:
        return [Check("index", False, f"{status.index_dir}: no index yet", "run `rag ingest PATH` first")]
    return [
        Check("index", True, f"{status.files} files, {status.chunks} chunks at {status.index_dir}"),
        Check(
            "index stores",
            True,
            f"on object storage at {status.index_dir}: CURRENT names version {status.version}; "
            "the stores' agreement is not checked by doctor yet",
            severity="warning",
        ),
    ]


def _index_checks(config: Config) -> list[Check]:
    location = config.index_location
    if location.on_object_store:
        return _remote_index_checks(config)
    layout = IndexLayout(config.index_dir)
    # The health check every command makes (raggity.store.health), in its words; then the slow one.
    manifest, problem = check_index(layout)
    if problem is not None and problem.message == f"{layout.root}: no index yet":
        return [Check("index", False, f"no index at {layout.root}", "run `rag ingest PATH`")]
    if problem is not None:
        return [Check("index", False, problem.message, problem.hint)]
    assert manifest is not None
    live = manifest.live_ids()
    checks = [Check("index", True, f"{len(manifest.sources)} files, {len(live)} chunks at {layout.root}")]
    notice = rebuild_notice(layout)
    if notice:
        checks.append(Check("index rebuild", True, notice, severity="warning"))
    writer = running_writer(layout.lock)
    try:
        table_ids = set(VectorTableReader(layout.table).all_ids())
        bm25_ids = Bm25Reader(layout.tantivy).all_ids()
    except (OSError, ValueError, RuntimeError) as exc:
        return [
            *checks,
            Check("index stores", False, f"cannot read index stores: {exc}", "run `rag ingest --rebuild`"),
        ]
    missing = live - (table_ids & bm25_ids)
    extra = (table_ids | bm25_ids) - live
    if missing:
        checks.append(
            Check(
                "index stores",
                False,
                f"{len(missing)} chunks listed but missing from the stores",
                "run `rag ingest` (it re-indexes the affected files)",
            )
        )
    elif extra and writer is not None:
        checks.append(
            Check(
                "index stores",
                True,
                f"an ingest is running (pid {writer}); {len(extra)} rows not committed yet",
            )
        )
    elif extra:
        checks.append(
            Check(
                "index stores",
                True,
                f"{len(extra)} leftover rows from an interrupted ingest (hidden)",
                "run `rag ingest` to remove them",
                "warning",
            )
        )
    else:
        checks.append(Check("index stores", True, "LanceDB, Tantivy and manifest agree"))
    return checks
