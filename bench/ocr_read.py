"""OCR through raggity's own reader (issue #44): the page bench/ocr_probe.py renders (A4 at 150 dpi,
five lines of 32-pixel DejaVu Sans), read three times by `read_file` with the `ocr` extra; prints
seconds per read (the first loads the models) and the character error rate.

    .venv/bin/python -m bench.ocr_read
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.ocr_probe import TEXT, error_rate, render
from raggity.documents.readers import read_file


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "page.png"
        render(page)
        for attempt in (1, 2, 3):
            started = time.perf_counter()
            [document] = list(read_file(page))
            seconds = time.perf_counter() - started
            rate = error_rate("\n".join(TEXT), document.text)
            print(
                f"read {attempt}: {seconds:.2f} s ({1 / seconds:.2f} pages/s), character error rate {rate:.4f}"
            )


if __name__ == "__main__":
    main()
