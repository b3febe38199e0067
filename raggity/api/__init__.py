"""The Python API that the CLI (and any program) uses: `Raggity(config)` with ingest(), search()
and ask(), plus the values and errors they return.

Names resolve on first use, so importing one of them (an error type for an exit code, say) does not
import the pipeline: `rag --help` stays instant.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from raggity.api.conversation import Conversation, Turn
    from raggity.api.session import Raggity, SearchResult
    from raggity.config.loader import load_config
    from raggity.config.schema import Config
    from raggity.core.errors import (
        ConfigError,
        ContextOverflowError,
        DatasetError,
        DownloadError,
        IndexBusyError,
        IndexStateError,
        IngestIncompleteError,
        ModelError,
        RaggityError,
        storage_error,
    )
    from raggity.core.types import Answer, Candidate, Citation, StageTrace
    from raggity.evaluation.answer_defaults import DEFAULT_PER_GROUP, DEFAULT_SEED
    from raggity.evaluation.answer_run import AnswerRecord, GroupScore
    from raggity.pipeline.attribution import UNVERIFIED_NOTE, verification_note
    from raggity.pipeline.graph_build import GraphBuildStatus
    from raggity.pipeline.ingest import IngestReport, Skipped
    from raggity.pipeline.ingest_pace import IngestPace

_EXPORTS = {
    "Conversation": "raggity.api.conversation",
    "Turn": "raggity.api.conversation",
    "Raggity": "raggity.api.session",
    "SearchResult": "raggity.api.session",
    "load_config": "raggity.config.loader",
    "Config": "raggity.config.schema",
    "RaggityError": "raggity.core.errors",
    "ContextOverflowError": "raggity.core.errors",
    "ConfigError": "raggity.core.errors",
    "ModelError": "raggity.core.errors",
    "IndexStateError": "raggity.core.errors",
    "IndexBusyError": "raggity.core.errors",
    "IngestIncompleteError": "raggity.core.errors",
    "DownloadError": "raggity.core.errors",
    "DatasetError": "raggity.core.errors",
    "storage_error": "raggity.core.errors",
    "Answer": "raggity.core.types",
    "Candidate": "raggity.core.types",
    "Citation": "raggity.core.types",
    "StageTrace": "raggity.core.types",
    "GraphBuildStatus": "raggity.pipeline.graph_build",
    "UNVERIFIED_NOTE": "raggity.pipeline.attribution",
    "verification_note": "raggity.pipeline.attribution",
    "IngestReport": "raggity.pipeline.ingest",
    "Skipped": "raggity.pipeline.ingest",
    "IngestPace": "raggity.pipeline.ingest_pace",
    "DEFAULT_PER_GROUP": "raggity.evaluation.answer_defaults",
    "DEFAULT_SEED": "raggity.evaluation.answer_defaults",
    "AnswerRecord": "raggity.evaluation.answer_run",
    "GroupScore": "raggity.evaluation.answer_run",
}

__all__ = [
    "DEFAULT_PER_GROUP",
    "DEFAULT_SEED",
    "UNVERIFIED_NOTE",
    "Answer",
    "AnswerRecord",
    "Candidate",
    "Citation",
    "Config",
    "ConfigError",
    "ContextOverflowError",
    "Conversation",
    "DatasetError",
    "DownloadError",
    "GraphBuildStatus",
    "GroupScore",
    "IndexBusyError",
    "IndexStateError",
    "IngestIncompleteError",
    "IngestPace",
    "IngestReport",
    "ModelError",
    "Raggity",
    "RaggityError",
    "SearchResult",
    "Skipped",
    "StageTrace",
    "Turn",
    "load_config",
    "storage_error",
    "verification_note",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'raggity.api' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
