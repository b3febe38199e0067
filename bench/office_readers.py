"""Compare document extractors on the files of bench/office_fixtures.py (issue #44, docs/ingestion.md).

Each (extractor, file) pair runs in a fresh interpreter, so that its import time and peak memory
(ru_maxrss) are its own; a run is stopped after 60 s. Extractors: `kreuzberg` (one Rust library for
many formats), `libs` (python-docx, python-pptx, openpyxl, odfpy, ebooklib, nbformat) and `raggity`
(raggity's own readers). Each needs its packages in the interpreter that runs this script:

    /tmp/m44k/bin/python bench/office_readers.py kreuzberg /tmp/fixtures
    /tmp/m44/bin/python bench/office_readers.py libs /tmp/fixtures
    .venv/bin/python bench/office_readers.py raggity /tmp/fixtures

For each file it prints seconds (import, extraction), peak RSS, the text's length, and whether the
text shows the headings ("Budget" on a line of its own or marked as a heading), a table's row
("Lamp" and "1200" on one line), slide notes and a formula's cached value; or the first line of
the error for a hostile file.
"""

# mypy: disable-error-code="no-untyped-call"
# ruff: noqa: PLC0415 - each extractor and writer loads only when its format is measured
from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def extract_kreuzberg(path: Path) -> str:
    import kreuzberg  # type: ignore[import-not-found,import-untyped,unused-ignore]

    return str(kreuzberg.extract_file_sync(str(path)).content)


def extract_libs(path: Path) -> str:
    suffix = path.suffix
    if suffix == ".docx":
        import docx  # type: ignore[import-not-found,import-untyped,unused-ignore]

        document = docx.Document(str(path))
        lines = [p.text for p in document.paragraphs]
        for table in document.tables:
            lines += [" | ".join(cell.text for cell in row.cells) for row in table.rows]
        return "\n".join(lines)
    if suffix == ".pptx":
        import pptx  # type: ignore[import-not-found,import-untyped,unused-ignore]

        lines = []
        for slide in pptx.Presentation(str(path)).slides:
            lines += [shape.text_frame.text for shape in slide.shapes if shape.has_text_frame]
            if slide.has_notes_slide:
                lines.append(slide.notes_slide.notes_text_frame.text)
        return "\n".join(lines)
    if suffix == ".xlsx":
        import openpyxl  # type: ignore[import-not-found,import-untyped,unused-ignore]

        book = openpyxl.load_workbook(str(path), read_only=True, data_only=True)
        return "\n".join(
            " | ".join("" if v is None else str(v) for v in row) for sheet in book for row in sheet.values
        )
    if suffix == ".odt":
        from odf import teletype  # type: ignore[import-not-found,import-untyped,unused-ignore]
        from odf.opendocument import load  # type: ignore[import-not-found,import-untyped,unused-ignore]
        from odf.text import H, P  # type: ignore[import-not-found,import-untyped,unused-ignore]

        document = load(str(path))
        return "\n".join(
            teletype.extractText(e) for e in document.getElementsByType(H) + document.getElementsByType(P)
        )
    if suffix == ".epub":
        import ebooklib  # type: ignore[import-not-found,import-untyped,unused-ignore]
        from ebooklib import epub

        book = epub.read_epub(str(path))
        return "\n".join(
            item.get_content().decode() for item in book.get_items_of_type(ebooklib.ITEM_DOCUMENT)
        )
    if suffix == ".ipynb":
        import nbformat  # type: ignore[import-not-found,import-untyped,unused-ignore]

        return "\n".join(cell.source for cell in nbformat.read(str(path), as_version=4).cells)
    raise ValueError(suffix)


def extract_raggity(path: Path) -> str:
    from raggity.documents.readers import read_file

    return "\n".join(document.text for document in read_file(path))


def _one(tool: str, path: Path) -> dict[str, Any]:
    started = time.perf_counter()
    extract = {"kreuzberg": extract_kreuzberg, "libs": extract_libs, "raggity": extract_raggity}[tool]
    if tool == "kreuzberg":
        import kreuzberg  # noqa: F401
    elif tool == "raggity":
        import raggity.documents.readers  # noqa: F401
    imported = time.perf_counter()
    try:
        text = extract(path)
        error = ""
    except Exception as exc:
        text, error = "", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:100]
    done = time.perf_counter()
    lines = text.splitlines()
    return {
        "import_s": round(imported - started, 3),
        "extract_s": round(done - imported, 3),
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "chars": len(text),
        "heading": any(line.strip().lstrip("#").strip() == "Budget" for line in lines),
        "table_row": any("Lamp" in line and "1200" in line for line in lines),
        "notes": "heron7" in text,
        "formula_value": "5.0" in text or "5\n" in text,
        "error": error,
    }


def main() -> None:
    if sys.argv[1] == "--one":
        print(json.dumps(_one(sys.argv[2], Path(sys.argv[3]))))
        return
    tool, folder = sys.argv[1], Path(sys.argv[2])
    files = sorted(p for p in folder.iterdir() if p.is_file()) + sorted((folder / "hostile").iterdir())
    for path in files:
        try:
            out = subprocess.run(
                [sys.executable, __file__, "--one", tool, str(path)],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            result = out.stdout.strip() or out.stderr.strip().splitlines()[-1]
        except subprocess.TimeoutExpired:
            result = "timed out after 60 s"
        print(f"{tool}\t{path.relative_to(folder)}\t{result}", flush=True)


if __name__ == "__main__":
    main()
