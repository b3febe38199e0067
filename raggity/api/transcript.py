"""A conversation as a Markdown transcript: each turn's message, answer and cited sources."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from raggity.api.conversation import Turn

# Candidates only: printable ASCII, tab and newline never need a look.
_SUSPECT = re.compile(r"[^\x20-\x7e\t\n]")
# Joiners stay: scripts and emoji need them, and they cannot reorder or hide text.
_KEPT = {"\u200c", "\u200d"}


def _escaped(char: str) -> str:
    category = unicodedata.category(char)
    if char == "\r":
        return "\\r"
    if category == "Cc":
        return f"\\x{ord(char):02x}"
    if category in {"Cf", "Cs", "Zl", "Zp"} and char not in _KEPT:
        return f"<U+{ord(char):04X}>"
    return char


def plain(text: str) -> str:
    """Document and model text as the transcript holds it: escape sequences, carriage returns and bidi
    controls written as visible escapes (as `rag chat` shows them), so that `cat chat.md` cannot drive
    the terminal and a Markdown viewer shows what the sources held."""
    return _SUSPECT.sub(lambda match: _escaped(match.group()), text)


def _quoted(text: str) -> str:
    return "\n".join(f"> {line}".rstrip() for line in text.strip().splitlines())


def transcript_markdown(turns: Sequence[Turn]) -> str:
    parts = ["# raggity chat\n"]
    for turn in turns:
        parts.append(f"## You\n\n{turn.text.strip()}\n")
        if turn.question != turn.text.strip():
            parts.append(f"*Searched for: {turn.question}*\n")
        parts.append(f"## raggity\n\n{turn.answer.text.strip()}\n")
        if turn.answer.citations:
            parts.append("Sources:\n")
            for c in turn.answer.citations:
                flag = "" if c.supported else " (does not support the sentence citing it)"
                parts.append(f"{c.n}. `{c.source}`, {c.location}{flag}\n\n{_quoted(c.text)}\n")
    return plain("\n".join(parts))
