"""Text made safe to print (raggity.core.visible, reached through the API as the CLI reaches all of
raggity): every control and invisible format character shown as a visible escape."""

from __future__ import annotations

from raggity.api import hidden, json_escaped, visible

__all__ = ["hidden", "json_escaped", "visible"]
