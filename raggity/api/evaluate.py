"""`rag eval`: index a BEIR collection, run every query through retrieval, score it with trec_eval's
definitions, and compare BM25 alone, dense alone, hybrid RRF and hybrid + rerank in one run."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from raggity.api.session import Raggity
from raggity.config.schema import Config, IndexConfig
from raggity.core.errors import IndexLocationError
from raggity.core.trace import TraceRecorder
from raggity.core.types import Candidate, TextDocument
from raggity.evaluation.dataset import BeirDataset, load_beir
from raggity.evaluation.metrics import evaluate_run, percentile
from raggity.pipeline.ingest.sync import IngestProgress
from raggity.pipeline.search.hybrid import Mode

# Floors tabulated for the abstention trade-off (see docs/retrieval.md).
FLOOR_GRID = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)


@dataclass(frozen=True)
class SystemScore:
    name: str
    metrics: dict[str, float]
    p50_ms: float
    p95_ms: float


@dataclass(frozen=True)
class AbstentionRow:
    floor: float
    answerable_abstained: float
    unrelated_abstained: float | None


@dataclass(frozen=True)
class EvalReport:
    dataset: str
    documents: int
    queries: int
    chunks: int
    index_seconds: float
    systems: tuple[SystemScore, ...]
    gold_recall: dict[str, float]
    abstention: tuple[AbstentionRow, ...]
    configured_floor: float


def corpus_documents(dataset: BeirDataset) -> list[TextDocument]:
    """The collection's documents as the index holds them: named by id, headed by their title."""
    return [TextDocument(d.id, d.text, d.title) for d in dataset.corpus]


def ranked_documents(candidates: Sequence[Candidate], limit: int) -> list[str]:
    """Chunk ranking -> document ranking: a document ranks where its best chunk does."""
    return list(dict.fromkeys(c.chunk.source for c in candidates))[:limit]


def evaluate(
    dataset_dir: Path,
    config: Config,
    *,
    k: int = 10,
    index_dir: Path | None = None,
    abstain_queries: Path | None = None,
    progress: IngestProgress | None = None,
    on_query: Callable[[str], None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> EvalReport:
    dataset = load_beir(dataset_dir)
    with eval_session(config, index_dir, warn) as session:
        index_seconds = index_corpus(session, dataset, progress)
        depth = max(100, k)
        systems = _score_systems(session, dataset, k, depth, on_query)
        gold, best_answerable = _squad_checks(session, dataset, k)
        unrelated = (
            _best_cosines(session, [q.text for q in load_beir(abstain_queries).queries])
            if abstain_queries
            else None
        )
        floors = _abstention_table(best_answerable, unrelated)
        return EvalReport(
            dataset.name,
            len(dataset.corpus),
            len(dataset.queries),
            live_chunks(session),
            index_seconds,
            systems,
            gold,
            floors,
            config.retrieval.sufficiency_floor,
        )


@contextmanager
def eval_session(
    config: Config,
    index_dir: Path | None,
    warn: Callable[[str], None] | None = None,
    open_session: Callable[[Config], Raggity] | None = None,
) -> Iterator[Raggity]:
    """A session on an evaluation index: `index_dir`, kept, or a throw-away folder deleted on exit.

    `open_session` builds the session from the evaluation config (default: a plain Raggity), so a
    caller can supply its own models.
    """
    workdir = Path(tempfile.mkdtemp(prefix="raggity-eval-")) if index_dir is None else None
    root = index_dir if index_dir is not None else workdir
    assert root is not None
    local = replace(config, index=IndexConfig(str(root.resolve())), source=config.source)
    make = open_session or (lambda cfg: Raggity(cfg, warn=warn or (lambda _: None)))
    try:
        yield make(local)
    finally:
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


def index_corpus(session: Raggity, dataset: BeirDataset, progress: IngestProgress | None) -> float:
    """Brings the session's index in step with the corpus (one source per document); returns seconds."""
    started = time.perf_counter()
    refuse_other_documents(session, dataset)
    session.index_documents(corpus_documents(dataset), progress=progress)
    return time.perf_counter() - started


def refuse_other_documents(session: Raggity, dataset: BeirDataset) -> None:
    """Evaluating brings the index in step with the corpus, deleting whatever else it lists, so an
    `--index FOLDER` that lists anything but this dataset's documents (the user's own index, an
    evaluation index of another dataset) is refused: only a new or empty folder, or an evaluation
    index of this same dataset (reused, its unchanged documents not embedded again), is written."""
    from raggity.store.manifest import load_manifest  # noqa: PLC0415 - loaded only by the command that needs it

    layout = session.layout
    if not layout.exists():
        return
    ids = {doc.id for doc in dataset.corpus}
    others = [source for source in load_manifest(layout.manifest).sources if source not in ids]
    if others:
        raise IndexLocationError(
            f"{layout.root}: holds an index of other documents ({len(others)}, such as {others[0]!r}), "
            f"not an evaluation index of {dataset.name}; refusing to replace it",
            "pass --index a new or empty folder (or this dataset's own evaluation index)",
        )


def live_chunks(session: Raggity) -> int:
    from raggity.store.manifest import load_manifest  # noqa: PLC0415 - loaded only by the command that needs it

    return len(load_manifest(session.layout.manifest).live_ids())


def _score_systems(
    session: Raggity, dataset: BeirDataset, k: int, depth: int, on_query: Callable[[str], None] | None
) -> tuple[SystemScore, ...]:
    plans: list[tuple[str, Mode, bool]] = [
        ("bm25", "bm25", False),
        ("dense", "dense", False),
        ("hybrid", "hybrid", False),
    ]
    if session.models.scorer is not None:
        plans.append(("hybrid+rerank", "hybrid", True))
    scores = []
    for name, mode, rerank in plans:
        run: dict[str, list[str]] = {}
        latencies: list[float] = []
        for query in dataset.queries:
            started = time.perf_counter()
            found = session.searcher.retrieve(
                query.text, TraceRecorder(), mode=mode, candidates=depth, rerank=rerank
            )
            latencies.append((time.perf_counter() - started) * 1000)
            run[query.id] = ranked_documents(found, depth)
            if on_query is not None:
                on_query(name)
        metrics = evaluate_run(run, dataset.qrels, k_values=(k, 100))
        scores.append(SystemScore(name, metrics, percentile(latencies, 50), percentile(latencies, 95)))
    return tuple(scores)


def _squad_checks(session: Raggity, dataset: BeirDataset, k: int) -> tuple[dict[str, float], list[float]]:
    answerable = [q for q in dataset.questions if not q.impossible]
    if not answerable:
        return {}, []
    hits = {1: 0, 5: 0, k: 0}
    best: list[float] = []
    for question in answerable:
        trace = TraceRecorder()
        found = session.searcher.retrieve(question.question, trace, rerank=False)
        docs = ranked_documents(found, max(hits))
        for cut in hits:
            hits[cut] += any(g in docs[:cut] for g in question.gold)
        best.append(max((c.dense_cosine or 0.0 for c in found), default=0.0))
    return {f"recall@{cut}": n / len(answerable) for cut, n in sorted(hits.items())}, best


def _best_cosines(session: Raggity, texts: Sequence[str]) -> list[float]:
    best = []
    for text in texts:
        found = session.searcher.retrieve(text, TraceRecorder(), mode="dense", rerank=False)
        best.append(max((c.dense_cosine or 0.0 for c in found), default=0.0))
    return best


def _abstention_table(
    answerable: Sequence[float], unrelated: Sequence[float] | None
) -> tuple[AbstentionRow, ...]:
    if not answerable:
        return ()
    return tuple(
        AbstentionRow(
            floor,
            sum(b < floor for b in answerable) / len(answerable),
            None if unrelated is None else sum(b < floor for b in unrelated) / max(len(unrelated), 1),
        )
        for floor in FLOOR_GRID
    )
