"""Source code files: the text unchanged, with function and class boundaries as headings.

Languages with a tree-sitter grammar (see code_symbols.py) are cut at their definitions, and each chunk
carries the names of the definitions it lies in. Other languages, files too large for one segment,
and files whose syntax tree holds no definition are streamed like plain text; Python files then still
get their top-level `class` and `def` lines as headings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from itertools import chain
from pathlib import Path

from raggity.core.types import Document, Heading
from raggity.documents.readers.code_symbols import GRAMMARS, definition_headings
from raggity.documents.readers.text import read_text_documents

_PYTHON_DEFINITION = re.compile(r"^(class|def|async def)[ \t]+(\w+)", re.MULTILINE)


def read_code(path: Path, *, segment_chars: int, max_chars: int) -> Iterator[Document]:
    suffix = path.suffix.lower()
    documents = read_text_documents(path, kind="code", segment_chars=segment_chars, max_chars=max_chars)
    first = next(documents, None)
    if first is None:
        return
    second = next(documents, None)
    grammar = GRAMMARS.get(suffix)
    if second is None and grammar is not None:
        headings = definition_headings(first.text, grammar)
        if headings:
            yield replace(first, headings=headings)
            return
    for document in chain([first], [] if second is None else [second], documents):
        yield replace(document, headings=python_headings(document.text)) if suffix == ".py" else document


def python_headings(text: str) -> tuple[Heading, ...]:
    """Top-level class and function definitions (decorators aside, the `def` line is the heading)."""
    return tuple(
        Heading(offset=match.start(), level=1, title=f"{match.group(1)} {match.group(2)}")
        for match in _PYTHON_DEFINITION.finditer(text)
    )
