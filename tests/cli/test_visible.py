"""visible() shows every control and invisible format character as an escape, and leaves real text alone."""

from __future__ import annotations

import json

import pytest

from raggity.cli.render import json_text
from raggity.cli.visible import hidden, visible

ESCAPED = {
    "clear screen": ("a\x1b[2Jb", "a\\x1b[2Jb"),
    "window title (OSC 0, BEL)": ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),
    "OSC 8 hyperlink": (
        "\x1b]8;;http://evil\x1b\\x\x1b]8;;\x1b\\",
        "\\x1b]8;;http://evil\\x1b\\x\\x1b]8;;\\x1b\\",
    ),
    "carriage return": ("safe\rEVIL", "safe\\rEVIL"),
    "backspace and NUL": ("a\x08\x00", "a\\x08\\x00"),
    "DEL": ("a\x7f", "a\\x7f"),
    "C1 CSI": ("a\x9b31m", "a\\x9b31m"),
    "right-to-left override": ("\u202egpj.exe", "<U+202E>gpj.exe"),
    "bidi isolates": ("\u2066a\u2069", "<U+2066>a<U+2069>"),
    "zero-width space": ("pass\u200bword", "pass<U+200B>word"),
    "byte order mark": ("\ufeffx", "<U+FEFF>x"),
    "soft hyphen": ("pay\u00adpal", "pay<U+00AD>pal"),
    "tag character": ("a\U000e0041", "a<U+E0041>"),
    "line separator": ("a\u2028b", "a<U+2028>b"),
    "undecodable file-name byte": ("caf\udce9.txt", "caf\\xe9.txt"),
    "lone surrogate": ("\ud800", "<U+D800>"),
    "newline on one line": ("a\nb", "a\\nb"),
}


@pytest.mark.parametrize("case", list(ESCAPED))
def test_hidden_characters_are_shown_as_escapes(case: str) -> None:
    raw, shown = ESCAPED[case]
    assert visible(raw) == shown


KEPT = [
    "plain ASCII with [markup] and a \\x1b already escaped",
    "tabs\tstay",
    "Ünïcödé, 日本語, Ελληνικά",
    "emoji with a joiner: \U0001f469\u200d\U0001f4bb",
    "Persian needs the non-joiner: \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
]


@pytest.mark.parametrize("text", KEPT)
def test_visible_text_is_left_alone(text: str) -> None:
    assert visible(text) == text


def test_newlines_are_kept_only_when_asked() -> None:
    assert visible("one\ntwo\x1b", keep_newlines=True) == "one\ntwo\\x1b"
    assert visible("one\ntwo") == "one\\ntwo"


def test_json_text_decodes_to_the_same_data_and_hides_nothing() -> None:
    data: dict[str, object] = {raw: [raw, {"text": raw}] for raw, _ in ESCAPED.values()}
    data["kept"] = KEPT
    dumped = json_text(data)
    assert json.loads(dumped) == data
    assert not [c for c in dumped if c != "\n" and hidden(c)]
    # Readable text stays readable, not \u-escaped.
    assert "日本語" in dumped
    assert "\u200d" in dumped
