"""Which answer thresholds a config answers with, and why: what `rag status` and `rag doctor` show."""

from __future__ import annotations

from raggity.config.schema import Config
from raggity.pipeline.answer.thresholds import ResolvedThresholds, resolve_thresholds


def answer_thresholds(config: Config) -> ResolvedThresholds:
    return resolve_thresholds(config)
