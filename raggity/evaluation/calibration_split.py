"""The questions kept for calibrating answerability, never used to measure answers.

A fixed quarter of every collection, chosen by hashing question ids, so that the calibration script
(bench/calibrate_answerability.py) and the answer benchmark (`rag eval --answers`) never share a
question, whatever their seeds and sample sizes.
"""

from __future__ import annotations

import hashlib


def in_calibration_split(question_id: str) -> bool:
    return hashlib.sha256(question_id.encode("utf-8")).digest()[0] % 4 == 0
