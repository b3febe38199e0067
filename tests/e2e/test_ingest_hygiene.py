"""`rag ingest` on folders with an index inside, hostile names, hidden and generated files, many skips."""

from __future__ import annotations

import json
import os
from pathlib import Path

from raggity.cli.skip_summary import skip_summary
from raggity.documents.private_files import HIDDEN
from raggity.pipeline.ingest.sync import Skipped
from raggity.store.manifest import load_manifest
from tests.support import INSTALL_MD, SOURDOUGH_TXT, rag, write_config


def _ingest_json(folder: Path, *args: str) -> dict[str, object]:
    done = rag("ingest", *args, "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def test_an_index_inside_the_ingested_folder_under_any_name_settles(tmp_path: Path) -> None:
    """Before, the index's own JSON files were indexed, and every later run found them changed."""
    docs = tmp_path / "docs"
    write_config(docs, index={"path": "search-db"}, ingest={"paths": ["."]})
    (docs / "install.md").write_text(INSTALL_MD, encoding="utf-8")
    first = _ingest_json(docs)
    assert first["added"] == 2  # install.md and raggity.toml
    second = _ingest_json(docs)
    assert (second["added"], second["changed"], second["removed"]) == (0, 0, 0)
    assert second["unchanged"] == 2
    sources = load_manifest(docs / "search-db" / "manifest.json").sources
    assert sorted(sources) == [str((docs / name).resolve()) for name in ("install.md", "raggity.toml")]


def test_a_file_name_that_is_not_utf8_is_one_warning_and_the_rest_is_indexed(tmp_path: Path) -> None:
    """Before, pyarrow raised UnicodeEncodeError: exit 70 and nothing indexed."""
    docs = tmp_path / "docs"
    write_config(tmp_path)
    docs.mkdir()
    (docs / "install.md").write_text(INSTALL_MD, encoding="utf-8")
    with open(os.path.join(os.fsencode(docs), b"sourdough-caf\xe9.txt"), "wb") as handle:
        handle.write(SOURDOUGH_TXT.encode())
    report = _ingest_json(tmp_path, "docs")
    assert report["added"] == 1
    assert report["skipped"] == [
        {
            "source": f"{docs.resolve()}/sourdough-caf\\xe9.txt",
            "reason": "name is not valid UTF-8 (rename it to index it)",
        }
    ]
    text = rag("ingest", "docs", "--rebuild", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    warning = [line for line in text.stdout.splitlines() if "not valid UTF-8" in line]
    assert warning == ["skipped 1 file: name is not valid UTF-8 (rename it to index it)"]
    assert "sourdough-caf\\xe9.txt'" in text.stdout


def test_the_summary_gives_one_line_per_reason_and_json_lists_every_file(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write_config(tmp_path)
    docs.mkdir()
    (docs / "install.md").write_text(INSTALL_MD, encoding="utf-8")
    for i in range(40):
        (docs / f"empty{i:02}.txt").write_text("", encoding="utf-8")
    for folder in (".aws", ".ssh"):
        (docs / folder).mkdir()
        (docs / folder / "config.json").write_text("{}\n", encoding="utf-8")
    (docs / "credentials.json").write_text('{"token": "hunter2"}\n', encoding="utf-8")
    (docs / "_static").mkdir()
    (docs / "_static" / "jquery.js").write_text("(function(){})();\n", encoding="utf-8")
    (docs / "searchindex.js").write_text('Search.setIndex({"terms": {}})\n', encoding="utf-8")
    (docs / "package-lock.json").write_text("{}\n", encoding="utf-8")

    done = rag("ingest", "docs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert "skipped 40 files: empty file" in lines
    generated = "generated, minified or vendored (set [ingest] include_generated = true to index them)"
    assert f"left out 1 folder and 2 files: {generated}" in lines
    assert any(
        line.startswith("left out 2 folders: hidden (set [ingest] include_hidden = true") for line in lines
    )
    assert any(line.startswith("left out 1 file: may hold keys or passwords") for line in lines)
    assert not any("empty0" in line for line in lines)  # 40 files: a count, not a list
    assert len(lines) < 20, lines
    assert "40 skipped, 6 left out" in done.stdout

    verbose = rag("ingest", "docs", "--rebuild", "--verbose", cwd=tmp_path)
    assert sum("docs/empty" in line for line in verbose.stdout.splitlines()) == 40

    report = _ingest_json(tmp_path, "docs", "--rebuild")
    root = str(docs.resolve())
    assert len(report["skipped"]) == 40  # type: ignore[arg-type]
    assert {"source": f"{root}/empty00.txt", "reason": "empty file"} in report["skipped"]  # type: ignore[operator]
    assert {entry["source"] for entry in report["excluded"]} == {  # type: ignore[attr-defined]
        f"{root}/.aws/", f"{root}/.ssh/", f"{root}/credentials.json", f"{root}/_static/",
        f"{root}/searchindex.js", f"{root}/package-lock.json",
    }  # fmt: skip
    sources = load_manifest(tmp_path / ".raggity" / "manifest.json").sources
    assert list(sources) == [f"{root}/install.md"]


def test_strict_fails_on_unreadable_files_not_on_files_left_out_by_rule(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write_config(tmp_path)
    (docs / ".github").mkdir(parents=True)
    (docs / ".github" / "ci.yml").write_text("on: push\n", encoding="utf-8")
    (docs / "install.md").write_text(INSTALL_MD, encoding="utf-8")
    done = rag("ingest", "docs", "--strict", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (docs / "blank.txt").write_text("", encoding="utf-8")
    failed = rag("ingest", "docs", "--strict", cwd=tmp_path)
    assert failed.returncode == 6
    assert "skipped 1 file: empty file\n  'docs/blank.txt'" in failed.stdout


def test_hidden_and_generated_files_are_indexed_when_the_config_says_so(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write_config(tmp_path, ingest={"include_hidden": True, "include_generated": True})
    (docs / ".notes").mkdir(parents=True)
    (docs / ".notes" / "install.md").write_text(INSTALL_MD, encoding="utf-8")
    (docs / "app.min.js").write_text("var sourdough = 'levain';" * 20 + "\n", encoding="utf-8")
    report = _ingest_json(tmp_path, "docs")
    assert (report["added"], report["excluded"]) == (2, [])


def test_twenty_thousand_skipped_files_make_a_handful_of_lines() -> None:
    skipped = [Skipped(f"/docs/empty{i}.txt", "empty file") for i in range(20_000)]
    skipped.append(Skipped("/docs/locked.md", "unreadable: permission denied"))
    excluded = [Skipped("/docs/.aws/", HIDDEN), Skipped("/docs/.ssh/", HIDDEN)]
    lines = skip_summary(skipped, excluded, verbose=False)
    assert [line.plain for line in lines] == [
        "skipped 20000 files: empty file",
        "  (rag ingest --verbose lists them; --json gives every path and reason)",
        "skipped 1 file: unreadable: permission denied",
        "  '/docs/locked.md'",
        f"left out 2 folders: {HIDDEN}",
        "  '/docs/.aws/'",
        "  '/docs/.ssh/'",
    ]
    assert len(skip_summary(skipped, excluded, verbose=True)) == 20_000 + 1 + 2 + 3
