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
    from raggity.api.shapes import answer_json, candidate_json, citation_json, passage_json, trace_json
    from raggity.config.loader import load_config
    from raggity.config.schema import Config
    from raggity.core.activity import Activity, listening
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
    from raggity.core.types import Answer, Candidate, Citation, Passage, StageTrace, TextDocument
    from raggity.core.visible import hidden, json_escaped, visible
    from raggity.evaluation.answer_defaults import DEFAULT_PER_GROUP, DEFAULT_SEED
    from raggity.evaluation.answer_run import AnswerRecord, GroupScore
    from raggity.pipeline.graph.build import GraphBuildStatus
    from raggity.pipeline.ingest.pace import IngestPace
    from raggity.pipeline.ingest.sync import IngestReport, Skipped
    from raggity.pipeline.model_loading import Models

_EXPORTS = {
    "Conversation": "raggity.api.conversation",
    "Turn": "raggity.api.conversation",
    "Raggity": "raggity.api.session",
    "SearchResult": "raggity.api.session",
    "answer_json": "raggity.api.shapes",
    "candidate_json": "raggity.api.shapes",
    "citation_json": "raggity.api.shapes",
    "passage_json": "raggity.api.shapes",
    "Passage": "raggity.core.types",
    "trace_json": "raggity.api.shapes",
    "Models": "raggity.pipeline.model_loading",
    "TextDocument": "raggity.core.types",
    "load_config": "raggity.config.loader",
    "Config": "raggity.config.schema",
    # What a slow reader is doing now (OCR on page 4 of a scan): the ingest bar listens.
    "Activity": "raggity.core.activity",
    "listening": "raggity.core.activity",
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
    "hidden": "raggity.core.visible",
    "json_escaped": "raggity.core.visible",
    "visible": "raggity.core.visible",
    "Answer": "raggity.core.types",
    "Candidate": "raggity.core.types",
    "Citation": "raggity.core.types",
    "StageTrace": "raggity.core.types",
    "GraphBuildStatus": "raggity.pipeline.graph.build",
    "IngestReport": "raggity.pipeline.ingest.sync",
    "Skipped": "raggity.pipeline.ingest.sync",
    "IngestPace": "raggity.pipeline.ingest.pace",
    "DEFAULT_PER_GROUP": "raggity.evaluation.answer_defaults",
    "DEFAULT_SEED": "raggity.evaluation.answer_defaults",
    "AnswerRecord": "raggity.evaluation.answer_run",
    "GroupScore": "raggity.evaluation.answer_run",
}

__all__ = [
    "DEFAULT_PER_GROUP",
    "DEFAULT_SEED",
    "Activity",
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
    "Models",
    "Passage",
    "Raggity",
    "RaggityError",
    "SearchResult",
    "Skipped",
    "StageTrace",
    "TextDocument",
    "Turn",
    "answer_json",
    "candidate_json",
    "citation_json",
    "hidden",
    "json_escaped",
    "listening",
    "load_config",
    "passage_json",
    "storage_error",
    "trace_json",
    "visible",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'raggity.api' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
