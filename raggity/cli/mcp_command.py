"""`rag mcp`: serve the index to coding agents over the Model Context Protocol (stdio)."""

from __future__ import annotations

from raggity.cli.shared import ConfigOption, load


def mcp_command(config: ConfigOption = None) -> None:
    """Serve search, ask and status as MCP tools over stdio, for coding agents. Read-only; see docs/mcp.md."""
    from raggity.mcp.server import serve  # noqa: PLC0415 - deferred so `rag --help` stays instant

    serve(load(config))
