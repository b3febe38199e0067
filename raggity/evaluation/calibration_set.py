"""The calibration set that ships inside the package (calibration_data/, see its README for the
source and licence): passages to index and questions in three groups to ask of them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from typing import Literal

from raggity.core.types import TextDocument

Group = Literal["answerable", "impossible", "out_of_corpus"]
GROUPS: tuple[Group, ...] = ("answerable", "impossible", "out_of_corpus")
_BY_NAME: dict[str, Group] = {g: g for g in GROUPS}


@dataclass(frozen=True)
class CalibrationQuestion:
    id: str
    group: Group
    question: str


@dataclass(frozen=True)
class CalibrationSet:
    passages: tuple[TextDocument, ...]
    # Round robin over the groups, as the file lists them.
    questions: tuple[CalibrationQuestion, ...]

    def limited(self, per_group: int | None) -> tuple[CalibrationQuestion, ...]:
        """The first `per_group` questions of each group (all for None), still round robin."""
        if per_group is None:
            return self.questions
        seen = dict.fromkeys(GROUPS, 0)
        kept = []
        for q in self.questions:
            if seen[q.group] < per_group:
                seen[q.group] += 1
                kept.append(q)
        return tuple(kept)

    def of_group(self, group: Group) -> tuple[CalibrationQuestion, ...]:
        return tuple(q for q in self.questions if q.group == group)


def _rows(name: str) -> list[dict[str, object]]:
    text = files("raggity.evaluation").joinpath("calibration_data", name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_calibration_set() -> CalibrationSet:
    passages = tuple(
        TextDocument(str(r["id"]), str(r["text"]), str(r["title"])) for r in _rows("passages.jsonl")
    )
    questions = []
    for r in _rows("questions.jsonl"):
        group = _BY_NAME.get(str(r["group"]))
        if group is None:
            raise ValueError(f"calibration_data/questions.jsonl: unknown group {r['group']!r}")
        questions.append(CalibrationQuestion(str(r["id"]), group, str(r["question"])))
    return CalibrationSet(passages, tuple(questions))
