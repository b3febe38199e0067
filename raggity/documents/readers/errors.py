"""What a reader raises for a file it cannot turn into text, and the bound on how much text it reads."""

from __future__ import annotations

from raggity.core.errors import RaggityError


class UnreadableFileError(RaggityError):
    """This one file yields no text; the message is a short reason ("binary file", "encrypted PDF")."""


# About 1.2 M tokens: some 5,000 chunks, tens of minutes of embedding on a laptop. A small file that
# expands past this (a PDF bomb, a 50 MB one-line log) is far more likely an accident than a wish.
DEFAULT_MAX_CHARS = 5_000_000


class TooMuchTextError(UnreadableFileError):
    """The file's text is longer than `[ingest] max_file_chars`; reading stopped there."""

    def __init__(self, max_chars: int) -> None:
        super().__init__(f"more than {max_chars:,} characters of text (raise ingest.max_file_chars)")
        self.max_chars = max_chars
