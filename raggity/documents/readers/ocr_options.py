"""Whether scanned pages and images are read by OCR ([ingest] ocr, ocr_max_pages), and the one-line
reasons a file that needs OCR is skipped without it. Light: no image or OCR library is imported here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from raggity.config.schema import IngestConfig
from raggity.models.ocr_models import OCR_INSTALL, ocr_installed

OcrMode = Literal["auto", "off"]


@dataclass(frozen=True, slots=True)
class OcrOptions:
    """`auto`: OCR when the `ocr` extra is installed; `off`: never. At most `max_pages` per file."""

    mode: OcrMode = "auto"
    max_pages: int = 50

    def unavailable(self) -> str | None:
        """Why OCR cannot run (a phrase for a skip line), or None when it can."""
        if self.mode == "off":
            return 'OCR is off ([ingest] ocr = "off")'
        if not ocr_installed():
            return f"OCR is not installed ({OCR_INSTALL})"
        return None


# OCR when it is installed, at most 50 pages a file: the config's defaults.
DEFAULT_OCR = OcrOptions()


def ocr_options(config: IngestConfig) -> OcrOptions:
    return OcrOptions("off" if config.ocr == "off" else "auto", config.ocr_max_pages)
