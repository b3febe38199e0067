"""A conversation as a Markdown transcript: each turn's message, answer and cited sources."""

from __future__ import annotations

from collections.abc import Sequence

from raggity.api.conversation import Turn


def _quoted(text: str) -> str:
    return "\n".join(f"> {line}".rstrip() for line in text.strip().splitlines())


def transcript_markdown(turns: Sequence[Turn]) -> str:
    parts = ["# raggity chat\n"]
    for turn in turns:
        parts.append(f"## You\n\n{turn.text.strip()}\n")
        if turn.question != turn.text.strip():
            parts.append(f"*Searched for: {turn.question}*\n")
        parts.append(f"## raggity\n\n{turn.answer.text.strip()}\n")
        if turn.retrieval_error:
            parts.append(f"*The documents could not be searched for this turn: {turn.retrieval_error}*\n")
        if turn.answer.citations:
            parts.append("Sources:\n")
            for c in turn.answer.citations:
                flag = "" if c.supported else " (does not support the sentence citing it)"
                parts.append(f"{c.n}. `{c.source}`, {c.location}{flag}\n\n{_quoted(c.text)}\n")
    return "\n".join(parts)
