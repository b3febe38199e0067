"""The one error a reader raises for a file it cannot turn into text."""

from __future__ import annotations

from raggity.core.errors import RaggityError


class UnreadableFileError(RaggityError):
    """This one file yields no text; the message is a short reason ("binary file", "encrypted PDF")."""
