"""The graph commands as the installed `rag` script runs them, with the real small GGUF."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import assert_clean_error, rag, write_config

ALPHA = "Ada Lovelace worked with Charles Babbage on the Analytical Engine in London.\n"
BETA = "The Danube flows through Vienna and Budapest before it reaches the Black Sea.\n"


def test_ingest_builds_the_graph_with_a_progress_bar_and_the_commands_report_it(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "alpha.txt").write_text(ALPHA)
    (docs / "beta.txt").write_text(BETA)
    write_config(
        tmp_path,
        retrieval={"rerank": False, "graph": True},
        generation={"model": "smollm2-135m-instruct", "max_tokens": 64, "temperature": 0.0},
    )

    ingest = rag("ingest", "docs", cwd=tmp_path)
    assert ingest.returncode == 0, ingest.stderr
    # The ingest bar, then the graph bar with both chunks done.
    graph_lines = [line for line in ingest.stdout.splitlines() if line.startswith("graph")]
    assert graph_lines, ingest.stdout
    assert "2/2 chunks" in graph_lines[-1]

    again = rag("graph-build", "--json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert (report["extracted"], report["unchanged"], report["removed"]) == (0, 2, 0)
    assert "graph" not in again.stderr  # nothing to extract: no empty bar

    stats = json.loads(rag("graph", "stats", "--json", cwd=tmp_path).stdout)
    assert stats["chunks_processed"] == stats["chunks_live"] == 2
    assert stats["nodes"] == report["nodes"]

    # A missing graph is one warning naming the fix; the search itself still answers.
    (tmp_path / ".raggity" / "graph.json").unlink()
    search = rag("search", "Danube", "--json", cwd=tmp_path)
    assert search.returncode == 0, search.stderr
    assert "rag graph-build" in search.stderr
    assert "Traceback" not in search.stderr
    assert any("beta.txt" in hit["source"] for hit in json.loads(search.stdout))

    # No index at all: one clean error line.
    empty = tmp_path / "empty"
    write_config(empty)
    failed = rag("graph-build", cwd=empty)
    assert failed.returncode == 4  # the exit code of "no index yet", as for rag search
    assert "no index yet" in assert_clean_error(failed.stderr)
    assert "rag ingest" in failed.stderr
    assert failed.stdout == ""  # no empty progress bar
