"""The OCR extra's models: found in the installed rapidocr wheel and checked against the pinned hashes."""

from __future__ import annotations

import hashlib

from raggity.models.ocr_models import (
    DETECTION_SHA256,
    ORIENTATION_SHA256,
    RECOGNITION_SHA256,
    ocr_installed,
    ocr_models,
)


def test_the_wheel_models_are_found_and_match_their_pins() -> None:
    assert ocr_installed()
    models = ocr_models()
    for path, pinned in (
        (models.detection, DETECTION_SHA256),
        (models.recognition, RECOGNITION_SHA256),
        (models.orientation, ORIENTATION_SHA256),
    ):
        assert path.name.endswith(".onnx")
        assert hashlib.sha256(path.read_bytes()).hexdigest() == pinned
