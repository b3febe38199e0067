"""Document and user text quoted into a model's prompt stays quoted material.

Every prompt raggity builds (answers, query transforms, chat history, entity extraction) quotes text
it does not control; one function makes it inert, so the three rooms of the pipeline share it from
here rather than from each other.
"""

from __future__ import annotations

import re

# A source must not be able to close its block, open a fake one, cite itself as another number,
# or smuggle chat-template control tokens into the conversation.
_DELIMITER = re.compile(r"<\s*/?\s*source\b", re.IGNORECASE)
_FAKE_CITATION = re.compile(r"\[(\s*\d+\s*)\]")
_CONTROL_TOKEN = re.compile(r"<\|([^|>]{0,40})\|>")


def neutralise(text: str) -> str:
    text = _DELIMITER.sub(lambda m: m.group(0).replace("<", "‹"), text)
    text = _FAKE_CITATION.sub(r"(\1)", text)
    return _CONTROL_TOKEN.sub(r"‹|\1|›", text)
