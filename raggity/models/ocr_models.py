"""The OCR models that ship inside the `rapidocr` wheel (the `ocr` extra), with pinned hashes.

Found through the import system's finder without importing rapidocr (it loads OpenCV), and checked
like every packaged model (shared MODELS.md): a file that is missing or whose SHA-256 differs is
never handed to the engine, so rapidocr is never left to fetch a model of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from raggity.core.errors import ModelError
from raggity.models.packaged import PackagedFile

OCR_PIP = "rapidocr==3.10.0"
OCR_INSTALL = "pip install 'raggity[ocr]'"

# PaddleOCR's PP-OCRv6 small detector and recogniser and the v2.0 mobile orientation classifier, as
# rapidocr 3.10.0 ships them (Apache-2.0: the wheel's MODEL_LICENSES.md).
DETECTION = PackagedFile("rapidocr", "models/PP-OCRv6_det_small.onnx", OCR_PIP)
DETECTION_SHA256 = "090f04abcd9d9a7498bc4ebf677e4cb9bdce1fe4197ddb7e529f1ef44e1ff94f"
RECOGNITION = PackagedFile("rapidocr", "models/PP-OCRv6_rec_small.onnx", OCR_PIP)
RECOGNITION_SHA256 = "6f327246b50388f3c176ae304bd95767ea6dc0c9ae92153ef8cbe210b3c14884"
ORIENTATION = PackagedFile("rapidocr", "models/ch_ppocr_mobile_v2.0_cls_mobile.onnx", OCR_PIP)
ORIENTATION_SHA256 = "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c"

_PINNED = (
    (DETECTION, DETECTION_SHA256),
    (RECOGNITION, RECOGNITION_SHA256),
    (ORIENTATION, ORIENTATION_SHA256),
)


@dataclass(frozen=True)
class OcrModels:
    """The three model files, verified."""

    detection: Path
    recognition: Path
    orientation: Path


def ocr_installed() -> bool:
    """Whether the `ocr` extra is installed (its wheel's models are where they belong)."""
    return all(file.locate() is not None for file, _ in _PINNED)


def ocr_models() -> OcrModels:
    """The verified model paths; ModelError when the extra is missing or a file was altered."""
    # The registry (and its Ollama lookup) loads only when OCR runs: every ingest imports this module.
    from raggity.models.registry import hash_cache  # noqa: PLC0415

    paths: list[Path] = []
    for file, expected in _PINNED:
        path = file.locate()
        if path is None:
            raise ModelError(f"OCR model {file.relative} not found", f"install the OCR extra: {OCR_INSTALL}")
        hash_cache().verify(
            path, expected, f"reinstall it: pip install --force-reinstall --no-deps {OCR_PIP}"
        )
        paths.append(path)
    return OcrModels(*paths)
