"""How many pages of the indexed text came from OCR: counted from the chunks whose place carries the
OCR mark (`page 4 (OCR)`, `image (OCR)`, `slide 7 (image, OCR)`; see ingest/readers/ocr.py and
pictures.py), for `rag status`."""

from __future__ import annotations

from pathlib import Path

from raggity.store.manifest import Manifest
from raggity.store.vector_table import committed

# The end of every place template an OCR reader writes: `(OCR)` for a scan, `(image, OCR)` for a
# picture inside a document.
OCR_MARK = "OCR)"


def ocr_page_count(table: Path, manifest: Manifest) -> int:
    """Distinct (file, page) pairs among the committed chunks read by OCR; an image is one page.
    Rows the manifest does not list (an ingest stopped before its commit) are not counted."""
    if not committed(table):
        return 0
    import lance  # noqa: PLC0415 - lance loads on first use

    dataset = lance.dataset(str(table))
    if "anchor" not in dataset.schema.names:
        return 0  # a table written before places had templates holds no OCR text
    rows = dataset.to_table(
        columns=["id", "source", "page_start", "page_end"], filter=f"anchor LIKE '%{OCR_MARK}'"
    ).to_pylist()
    listed = manifest.live_ids()
    pages = {
        (row["source"], page)
        for row in rows
        if row["id"] in listed
        for page in range(row["page_start"] or 1, (row["page_end"] or row["page_start"] or 1) + 1)
    }
    return len(pages)
