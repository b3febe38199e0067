"""Which missing models are worth a warning on every command."""

from __future__ import annotations

from dataclasses import replace

from raggity.config.schema import Config, RetrievalConfig
from raggity.pipeline.models import load_scorer


def test_the_default_reranker_missing_is_quiet_a_named_one_is_not() -> None:
    warnings: list[str] = []
    assert load_scorer(Config(), warnings.append) is None
    assert warnings == []  # no offline install has it: doctor and status say so, not every command

    named = Config(retrieval=replace(RetrievalConfig(), rerank_model="my-reranker"))
    assert load_scorer(named, warnings.append) is None
    assert len(warnings) == 1
    assert "my-reranker" in warnings[0]
    assert "not installed" in warnings[0]
