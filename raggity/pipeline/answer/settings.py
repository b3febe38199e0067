"""The settings one question is answered with: the config's retrieval and generation keys, and the
answerability thresholds calibrated for the model (Answerer.settings fills them in)."""

from __future__ import annotations

from dataclasses import dataclass, field

from raggity.config.schema import GenerationConfig, RetrievalConfig
from raggity.pipeline.answer.answerability import Thresholds, thresholds_for


@dataclass(frozen=True)
class AskSettings:
    """The ask-time settings, defaulting to the configuration's own defaults."""

    top_k: int = RetrievalConfig.top_k
    sufficiency_floor: float = RetrievalConfig.sufficiency_floor
    relevance_floor: float = RetrievalConfig.relevance_floor
    parent_document: bool = RetrievalConfig.parent_document
    max_tokens: int = GenerationConfig.max_tokens
    source_tokens: int = GenerationConfig.source_tokens
    temperature: float = GenerationConfig.temperature
    # Calibrated per model (see answerability.py); the session passes its model's.
    answerability: Thresholds = field(default_factory=lambda: thresholds_for(GenerationConfig.model))

    @property
    def cache_options(self) -> dict[str, object]:
        """The settings that change a generated answer, for the answer cache's key."""
        return {
            "max_tokens": self.max_tokens,
            "source_tokens": self.source_tokens,
            "temperature": self.temperature,
            "parent_document": self.parent_document,
        }
