"""Source code files: the text unchanged, streamed in segments like plain text.

Python files also get their top-level `class` and `def` lines as headings, so that a chunk of a
long module carries the name of the definition it comes from.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from raggity.core.types import Document, Heading
from raggity.ingest.readers.text import read_text_documents

_PYTHON_DEFINITION = re.compile(r"^(class|def|async def)[ \t]+(\w+)", re.MULTILINE)


def read_code(path: Path, *, segment_chars: int, max_chars: int) -> Iterator[Document]:
    is_python = path.suffix.lower() == ".py"
    for document in read_text_documents(path, kind="code", segment_chars=segment_chars, max_chars=max_chars):
        yield replace(document, headings=python_headings(document.text)) if is_python else document


def python_headings(text: str) -> tuple[Heading, ...]:
    """Top-level class and function definitions (decorators aside, the `def` line is the heading)."""
    return tuple(
        Heading(offset=match.start(), level=1, title=f"{match.group(1)} {match.group(2)}")
        for match in _PYTHON_DEFINITION.finditer(text)
    )
