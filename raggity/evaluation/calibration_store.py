"""Where calibrations are kept, and how they are read back.

A model's calibration (`rag calibrate`) is a JSON file named by the model file's SHA-256 under the
models folder (`<models>/calibrations/<sha256>.json`), beside the models raggity pulls: it belongs to
those exact weights, whatever name or path they are used by. A corpus's calibration (`rag calibrate
--corpus`) is kept with the index (`calibration.json` in the index folder), one entry per model
SHA-256, so that a rebuilt or deleted index takes it along. Signals collected on the way are appended
to a log beside the model's calibration, one line per question, so an interrupted run continues.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from raggity.core.atomic_file import atomic_write_text
from raggity.models.registry import models_home

# The format of a corpus calibration whose floors were fitted on the index (see Calibration.format).
CORPUS_FORMAT = 2


@dataclass(frozen=True)
class Calibration:
    """One fitted pair and what it was fitted on."""

    model: str
    sha256: str
    calibrated_at: str  # ISO 8601, UTC
    prompt_version: str
    sufficiency_floor: float
    min_coverage: float
    max_refusal_probability: float
    # Questions per group, and the share of each group the fitted thresholds decline.
    n: Mapping[str, int] = field(default_factory=dict)
    declined: Mapping[str, float] = field(default_factory=dict)
    scope: str = "model"  # "model": the shipped set; "corpus": this index's own chunks
    seconds: float = 0.0
    # 1: the ceiling (and a model's coverage floor) fitted, sufficiency_floor only recorded;
    # 2 (CORPUS_FORMAT): a corpus calibration whose cosine and coverage floors were fitted on the
    # index, its sufficiency_floor used in place of the config's where higher.
    format: int = 1

    @property
    def fitted_floor(self) -> float | None:
        """The cosine floor fitted on the index, or None where the config's floor holds."""
        return self.sufficiency_floor if self.scope == "corpus" and self.format >= CORPUS_FORMAT else None

    @property
    def total(self) -> int:
        return sum(self.n.values())

    def summary(self) -> str:
        """ "calibrated 2026-11-26, n=800 (coverage floor 0.4, ceiling 0.7146)"."""
        what = "calibrated on this index" if self.scope == "corpus" else "calibrated"
        # A fit whose questions to decline the judgement could not tell from the answerable ones
        # keeps the judgement from declining anything: say so wherever the pair is shown.
        off = "; the model's judgement declines nothing" if self.max_refusal_probability >= 1.0 else ""
        floor = "" if self.fitted_floor is None else f"cosine floor {self.fitted_floor}, "
        return (
            f"{what} {self.calibrated_at[:10]}, n={self.total} ({floor}coverage floor {self.min_coverage}, "
            f"ceiling {self.max_refusal_probability}{off})"
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Calibration:
        return cls(
            model=str(data["model"]),
            sha256=str(data["sha256"]),
            calibrated_at=str(data["calibrated_at"]),
            prompt_version=str(data["prompt_version"]),
            sufficiency_floor=float(data["sufficiency_floor"]),
            min_coverage=float(data["min_coverage"]),
            max_refusal_probability=float(data["max_refusal_probability"]),
            n={str(k): int(v) for k, v in dict(data.get("n", {})).items()},
            declined={str(k): float(v) for k, v in dict(data.get("declined", {})).items()},
            scope=str(data.get("scope", "model")),
            seconds=float(data.get("seconds", 0.0)),
            format=int(data.get("format", 1)),
        )


def calibrations_home() -> Path:
    return models_home() / "calibrations"


def model_calibration_file(sha256: str) -> Path:
    return calibrations_home() / f"{sha256}.json"


def signal_log(sha256: str, kind: str) -> Path:
    """The append-only log of one calibration's signals (`kind` names the set and prompt version)."""
    return calibrations_home() / f"{sha256}.{kind}.signals.jsonl"


def read_model_calibration(sha256: str) -> Calibration | None:
    """The stored calibration of these weights; None when there is none or it cannot be read (the
    caller falls back and `rag doctor` says so)."""
    try:
        return Calibration.from_json(json.loads(model_calibration_file(sha256).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_model_calibration(calibration: Calibration) -> Path:
    path = model_calibration_file(calibration.sha256)
    atomic_write_text(path, json.dumps(asdict(calibration), indent=1) + "\n")
    return path


def read_corpus_calibration(index_file: Path, sha256: str) -> Calibration | None:
    try:
        entries = json.loads(index_file.read_text(encoding="utf-8"))
        return Calibration.from_json(entries[sha256])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_corpus_calibration(index_file: Path, calibration: Calibration) -> Path:
    """Adds (or replaces) this model's entry, keeping the other models' entries."""
    entries: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(index_file.read_text(encoding="utf-8"))
        entries = loaded if isinstance(loaded, dict) else {}
    entries[calibration.sha256] = asdict(calibration)
    atomic_write_text(index_file, json.dumps(entries, indent=1) + "\n")
    return index_file


class SignalLog:
    """Rows already collected, by `key` (the question), and an open file to append new ones to: a run that was
    interrupted continues where it stopped. A torn last line (a kill mid-write) is skipped."""

    def __init__(self, path: Path, key: str = "question") -> None:
        self.path = path
        self.key = key
        self.rows: dict[str, dict[str, Any]] = {}
        with contextlib.suppress(FileNotFoundError):
            for line in path.read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError):
                    row = json.loads(line)
                    if isinstance(row, dict) and key in row:
                        self.rows[str(row[key])] = row

    @contextlib.contextmanager
    def appending(self) -> Iterator[TextIO]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        torn = False
        with contextlib.suppress(FileNotFoundError), self.path.open("rb") as existing:
            if existing.seek(0, 2) > 0:
                existing.seek(-1, 2)
                torn = existing.read(1) != b"\n"
        with self.path.open("a", encoding="utf-8") as handle:
            if torn:  # the next row starts a line of its own
                handle.write("\n")
            yield handle

    def add(self, handle: TextIO, row: dict[str, Any]) -> None:
        handle.write(json.dumps(row) + "\n")
        handle.flush()
        self.rows[str(row[self.key])] = row
