"""OCR probe for issue #44: render a page of known text with Pillow, read it with RapidOCR on ONNX
Runtime from the models its wheel ships, and print the character error rate and seconds per page.

rapidocr is not a raggity dependency (see docs/ingestion.md, PDF): run it in a scratch venv,

    python3 -m venv /tmp/ocr && /tmp/ocr/bin/pip install rapidocr==3.10.0 onnxruntime pillow
    /tmp/ocr/bin/python bench/ocr_probe.py
"""

# mypy: disable-error-code="no-untyped-call"
# ruff: noqa: PLC0415 - rapidocr loads after the page is drawn, so its start-up is timed alone
from __future__ import annotations

import time
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

TEXT = [
    "The lighthouse budget for next year is 4,200 euros.",
    "Boats come into the harbour at dawn and leave at dusk.",
    "Maintenance of the lamp is done twice a month by Ada.",
    "Costs rose by five percent because of the new paint.",
    "The keeper writes every ship that passes in a log book.",
]
FONTS = ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans.ttf"]


def render(path: Path) -> None:
    """An A4 page at 150 dpi with TEXT in 32-pixel type."""
    font: ImageFont.FreeTypeFont | ImageFont.ImageFont = ImageFont.load_default(size=32)
    for candidate in FONTS:
        if Path(candidate).exists():
            font = ImageFont.truetype(candidate, 32)
            break
    image = Image.new("RGB", (1240, 1754), "white")
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(TEXT):
        draw.text((80, 120 + 60 * number), line, fill="black", font=font)
    image.save(path)


def error_rate(expected: str, got: str) -> float:
    """Levenshtein distance over the expected text's length."""
    previous = list(range(len(got) + 1))
    for i, a in enumerate(expected, 1):
        current = [i]
        for j, b in enumerate(got, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1] / max(1, len(expected))


def main() -> None:
    page = Path("/tmp/ocr_probe_page.png")
    render(page)
    started = time.perf_counter()
    from rapidocr import RapidOCR  # type: ignore[import-not-found,import-untyped,unused-ignore]

    engine = RapidOCR()
    ready = time.perf_counter()
    engine(str(page))
    first = time.perf_counter()
    result = engine(str(page))
    second = time.perf_counter()
    got = "\n".join(getattr(result, "txts", None) or [])
    print(
        f"start {ready - started:.2f} s, first page {first - ready:.2f} s, next page {second - first:.2f} s"
    )
    print(f"character error rate {error_rate(chr(10).join(TEXT), got):.4f}")


if __name__ == "__main__":
    main()
