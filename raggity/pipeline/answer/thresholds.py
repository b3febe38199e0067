"""Which answerability thresholds a configuration answers with, and why: the one place they are
resolved, so that ask, chat, MCP and eval judge alike.

In order: the calibration fitted on this index for this model (`rag calibrate --corpus`, with its
cosine floor where it fitted one), the model's own calibration (`rag calibrate`), the pair that ships
for a packaged model (CALIBRATED), else the uncalibrated default, with a warning. A calibration
counts only for the prompt version it was read with: a refusal probability is read from the prompt,
and another prompt reads otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from raggity.config.schema import Config
from raggity.core.errors import ModelError
from raggity.evaluation.calibration_store import (
    Calibration,
    read_corpus_calibration,
    read_model_calibration,
)
from raggity.models.packaged import GENERATORS
from raggity.models.registry import hash_cache, resolve_generator
from raggity.pipeline.answer.answerability import CALIBRATED, Thresholds
from raggity.pipeline.answer.prompt import PROMPT_VERSION
from raggity.store.layout import IndexLayout

Origin = Literal["corpus", "calibrated", "shipped", "default"]


@dataclass(frozen=True)
class ResolvedThresholds:
    thresholds: Thresholds
    origin: Origin
    # What `rag status` and `rag doctor` show.
    summary: str
    # The cosine floor fitted on this index (`rag calibrate --corpus`), or None: the config's.
    sufficiency_floor: float | None = None

    def floor(self, configured: float) -> float:
        """The cosine floor to answer with: the index's fitted floor where it is higher than the
        configured one (a user who raised the floor keeps theirs)."""
        return configured if self.sufficiency_floor is None else max(configured, self.sufficiency_floor)


def generator_name(config: Config) -> str:
    g = config.generation
    return g.model_path or g.model


def generator_sha256(config: Config) -> str | None:
    """The SHA-256 of the configured generator's weights: pinned for a packaged model (nothing is
    read), else the hash the registry verified (remembered by path, size and mtime, so a model is
    hashed once). None when the model cannot be found: loading it reports that."""
    g = config.generation
    packaged = None if g.model_path else GENERATORS.get(g.model)
    if packaged is not None:
        return packaged.sha256
    try:
        return hash_cache().digest(resolve_generator(g, config.base_dir).gguf)
    except (ModelError, OSError):
        return None


def _usable(calibration: Calibration | None) -> Calibration | None:
    return calibration if calibration is not None and calibration.prompt_version == PROMPT_VERSION else None


def resolve_thresholds(config: Config, *, corpus: bool = True) -> ResolvedThresholds:
    """`corpus`: False leaves this index's own calibration out (the model's thresholds, which a
    corpus calibration starts from)."""
    name = generator_name(config)
    sha = generator_sha256(config)
    if sha is not None:
        fitted = None
        if corpus and not config.index_location.on_object_store:
            fitted = _usable(read_corpus_calibration(IndexLayout(config.index_dir).calibration, sha))
        if fitted is not None:
            return ResolvedThresholds(_pair(fitted), "corpus", fitted.summary(), fitted.fitted_floor)
        own = _usable(read_model_calibration(sha))
        if own is not None:
            return ResolvedThresholds(_pair(own), "calibrated", own.summary())
    # model_path names a file nobody calibrated, whatever `model` says.
    shipped = None if config.generation.model_path else CALIBRATED.get(config.generation.model)
    if shipped is not None:
        return ResolvedThresholds(
            shipped,
            "shipped",
            f"shipped calibration of {name} (coverage floor {shipped.min_coverage}, "
            f"ceiling {shipped.max_refusal_probability})",
        )
    default = Thresholds()
    return ResolvedThresholds(
        default,
        "default",
        f"uncalibrated: run `rag calibrate` (declines use the default coverage floor "
        f"{default.min_coverage} and ceiling {default.max_refusal_probability}, which mean nothing "
        f"for {name})",
    )


def _pair(calibration: Calibration) -> Thresholds:
    return Thresholds(calibration.min_coverage, calibration.max_refusal_probability)
