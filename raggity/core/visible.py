"""Text from documents, file names and the model, made safe to print: invisible controls shown as escapes.

In core so that every door shows data alike: the CLI (raggity.cli.visible re-exports it, through
raggity.api) and the MCP server (its JSON-RPC lines go through `json_escaped`, as `--json` does).

A terminal obeys escape sequences (clear screen, window title, OSC 8 hyperlinks), a carriage return
overwrites the line, and bidi overrides reorder what is shown; all of them arrive in ordinary files.
Every character that is not plainly visible text is replaced by a visible escape, so what the
terminal shows is what the data holds:

- control characters (Unicode Cc: C0 but tab and newline, DEL, C1) as `\\x1b`, `\\r`, `\\x9b`;
- surrogates left by undecodable file-name bytes (U+DC80-U+DCFF) as the byte they stand for, `\\xff`;
- other invisible format characters (Cf: bidi overrides and isolates, zero-width space, BOM, tag
  characters), line and paragraph separators and other surrogates as `<U+202E>`.

The zero-width joiner and non-joiner (U+200D, U+200C) stay: Persian, Indic scripts and emoji need
them, and they cannot reorder or hide text.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_NAMED = {"\n": "\\n", "\r": "\\r"}
_KEPT_FORMAT = {"\u200c", "\u200d"}
_ESCAPED_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}
# Candidates only: printable ASCII and, unless asked otherwise, tab and newline never need a look.
_SUSPECT_MULTILINE = re.compile(r"[^\x20-\x7e\t\n]")
_SUSPECT_ONE_LINE = re.compile(r"[^\x20-\x7e\t]")


@lru_cache(maxsize=4096)
def hidden(char: str) -> bool:
    """True for a character a terminal would obey or not show: it must never be printed as it is."""
    return char not in _KEPT_FORMAT and unicodedata.category(char) in _ESCAPED_CATEGORIES


def _escape_char(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    if not hidden(char):
        return char
    point = ord(char)
    if unicodedata.category(char) == "Cc":
        return f"\\x{point:02x}"
    if 0xDC80 <= point <= 0xDCFF:  # os.fsdecode's stand-in for an undecodable byte
        return f"\\x{point - 0xDC00:02x}"
    return f"<U+{point:04X}>"


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with every control and invisible format character replaced by a visible escape.

    Newlines are kept only for multi-line text such as an answer; a file name, a snippet or an error
    line shows them as `\\n`, so data can never fake an extra line of output.
    """
    suspect = _SUSPECT_MULTILINE if keep_newlines else _SUSPECT_ONE_LINE
    return suspect.sub(lambda match: _escape_char(match.group()), text)


# JSON keeps non-ASCII text readable (ensure_ascii=False), except what `hidden` flags: those become
# \u escapes, which decode to the very same string.
_NOT_PLAIN_JSON = re.compile(r"[^\x20-\x7e\n]")


def _json_escape(char: str) -> str:
    if not hidden(char):
        return char
    units = char.encode("utf-16-le", "surrogatepass")
    return "".join(f"\\u{int.from_bytes(units[i : i + 2], 'little'):04x}" for i in range(0, len(units), 2))


def json_escaped(dumped: str) -> str:
    """JSON text (as json.dumps or pydantic wrote it) with every hidden character written as a \\u
    escape: the same value once parsed, but a terminal, a log or an agent's transcript that shows the
    raw text shows no bidi override or escape sequence. Only string contents can hold such a
    character (JSON's own syntax is ASCII), so the text stays valid JSON."""
    return _NOT_PLAIN_JSON.sub(lambda match: _json_escape(match.group()), dumped)
