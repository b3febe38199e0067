"""OCR end to end: an image in a folder is ingested, searched, opened by its printed citation and
counted by `rag status`; `rag --help` and `rag search` never load the OCR extra; with `ocr = "off"`
the image is skipped with one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from raggity.api.session import Raggity
from raggity.api.show import show
from raggity.cli.main import app
from raggity.config.loader import load_config
from tests.ingest.test_ocr import LINES, page
from tests.support import write_config

OCR_MODULES = ("rapidocr", "cv2", "PIL", "raggity.documents.readers.ocr")
PROBE = f"""
import json, sys
from typer.testing import CliRunner
from raggity.cli.main import app

runner = CliRunner()
help = runner.invoke(app, ["--help"])
assert help.exit_code == 0, help.output
after_help = sorted(m for m in {OCR_MODULES} if m in sys.modules)
found = runner.invoke(app, ["search", "lighthouse budget", "--json", "--config", sys.argv[1]])
assert found.exit_code == 0, found.output
hits = json.loads(found.stdout)
print(json.dumps({{"help": after_help, "search": sorted(m for m in {OCR_MODULES} if m in sys.modules),
                  "top": [hits[0]["source"], hits[0]["location"]] if hits else []}}))
"""


def test_an_image_is_ingested_searched_shown_and_counted(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    page(LINES).save(docs / "note.png")
    (docs / "other.md").write_text("# Other\n\nThe harbour opens at dawn.\n", encoding="utf-8")
    config = write_config(tmp_path, ingest={"ocr": "auto"})
    session = Raggity(load_config(config))
    report = session.ingest([docs])
    assert report.skipped == ()
    shown = "\n".join(chunk.text for chunk in show(session.layout, "note.png:image (OCR)"))
    assert "4,200 euros" in shown
    status = CliRunner().invoke(app, ["status", "--json", "--config", str(config)])
    assert status.exit_code == 0, status.output
    assert json.loads(status.stdout)["ocr_pages"] == 1
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(config)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    assert probe["help"] == []
    assert probe["search"] == []
    assert probe["top"] == [str(docs / "note.png"), "image (OCR)"]


def test_with_ocr_off_an_image_is_skipped_with_one_line(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    page(LINES).save(docs / "note.png")
    (docs / "other.md").write_text("# Other\n\nThe harbour opens at dawn.\n", encoding="utf-8")
    session = Raggity(load_config(write_config(tmp_path, ingest={"ocr": "off"})))
    report = session.ingest([docs])
    assert [(Path(s.source).name, s.reason) for s in report.skipped] == [
        ("note.png", 'image: OCR is off ([ingest] ocr = "off")')
    ]
    assert report.added == 1
