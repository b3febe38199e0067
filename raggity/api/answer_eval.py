"""`rag eval --answers`: the whole ask pipeline on seeded question samples of a collection, scored."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from raggity.api.evaluate import eval_session, index_corpus, live_chunks
from raggity.api.session import Raggity
from raggity.config.schema import Config
from raggity.core.errors import DatasetError
from raggity.evaluation.answer_defaults import DEFAULT_PER_GROUP, DEFAULT_SEED
from raggity.evaluation.answer_run import (
    AnswerProgress,
    GroupScore,
    run_cases,
    sample_cases,
    summarize_all,
)
from raggity.evaluation.dataset import load_beir
from raggity.pipeline.ingest.sync import IngestProgress


@dataclass(frozen=True)
class AnswerReport:
    dataset: str
    model: str
    seed: int
    per_group: int
    documents: int
    chunks: int
    index_seconds: float
    groups: tuple[GroupScore, ...]


def evaluate_answers(
    dataset_dir: Path,
    config: Config,
    *,
    per_group: int = DEFAULT_PER_GROUP,
    seed: int = DEFAULT_SEED,
    abstain_queries: Path | None = None,
    index_dir: Path | None = None,
    progress: IngestProgress | None = None,
    answers: AnswerProgress | None = None,
    warn: Callable[[str], None] | None = None,
    open_session: Callable[[Config], Raggity] | None = None,
) -> AnswerReport:
    """Indexes the corpus as `rag eval` does, then asks each sampled question through `Raggity.ask`.

    `open_session` builds the session from the evaluation config (default: a plain Raggity).
    """
    dataset = load_beir(dataset_dir)
    if not dataset.questions:
        raise DatasetError(
            f"{dataset.name}/questions.jsonl is missing or empty: --answers needs questions with gold answers",
            'add questions.jsonl ({"_id", "question", "answers", "impossible", "gold", "para"} per line)',
        )
    unrelated = load_beir(abstain_queries).queries if abstain_queries is not None else ()
    cases = sample_cases(dataset.questions, unrelated, per_group, seed)
    with eval_session(config, index_dir, warn, open_session) as session:
        # Resolving the generator's file first makes a wrong model name fail before a long ingest.
        _ = session.models.generator_identity
        index_seconds = index_corpus(session, dataset, progress)
        # Loaded before the first question, so that no question's time includes loading a model.
        _ = session.models.scorer
        generator = session.models.generator
        records = run_cases(session, cases, answers)
        return AnswerReport(
            dataset=dataset.name,
            model=generator.identity,
            seed=seed,
            per_group=per_group,
            documents=len(dataset.corpus),
            chunks=live_chunks(session),
            index_seconds=index_seconds,
            groups=summarize_all(records),
        )
