"""An index emptied by deletions (every file removed, then ingested again) answers with no results
and an abstention, on the command line and over MCP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp import ClientSession

from raggity.store.manifest import load_manifest
from tests.mcp.test_mcp_server import payload, run_client
from tests.support import INSTALL_MD, rag, write_config


def _emptied(tmp_path: Path) -> Path:
    config = write_config(tmp_path, index={"path": str(tmp_path / "index")}, generation={"threads": 1})
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "install.md").write_text(INSTALL_MD, encoding="utf-8")
    assert rag("ingest", "docs", cwd=tmp_path).returncode == 0
    (docs / "install.md").unlink()
    done = rag("ingest", "docs", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["removed"] == 1
    assert load_manifest(tmp_path / "index" / "manifest.json").sources == {}
    return config


def test_search_and_ask_on_an_emptied_index_find_nothing_cleanly(tmp_path: Path) -> None:
    """Before: `ValueError: cannot reshape array of size 0`, exit 70 (and a traceback over MCP)."""
    config = _emptied(tmp_path)
    found = rag("search", "--json", "install on linux", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert "Traceback" not in found.stderr
    assert json.loads(found.stdout) == []
    asked = rag("ask", "--json", "How do I install frobnicator on Linux?", cwd=tmp_path)
    assert "Traceback" not in asked.stderr
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["abstained"] is True

    seen: dict[str, Any] = {}

    async def body(session: ClientSession) -> None:
        seen["search"] = payload(await session.call_tool("search", {"query": "install on linux"}))
        seen["ask"] = payload(await session.call_tool("ask", {"question": "How do I install it on Linux?"}))

    run_client(config, body)
    assert seen["search"]["sources"] == []
    assert seen["ask"]["declined"] is True
