"""File readers: encodings, newlines, streaming segments, headings, HTML extraction, error reasons."""

from __future__ import annotations

import codecs
import errno
import io
import itertools
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raggity.core.errors import RaggityError
from raggity.core.types import Document, Heading
from raggity.documents.readers import UnreadableFileError, read_file
from raggity.documents.readers.markdown import markdown_headings
from raggity.documents.readers.rst import rst_headings
from raggity.documents.readers.text import decode_blocks, segment


def write(path: Path, data: bytes | str) -> Path:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def read_one(path: Path) -> Document:
    documents = list(read_file(path))
    assert len(documents) == 1
    return documents[0]


def reason(path: Path) -> str:
    with pytest.raises(UnreadableFileError) as caught:
        list(read_file(path))
    return caught.value.message


def titles(headings: tuple[Heading, ...]) -> list[tuple[int, str]]:
    return [(heading.level, heading.title) for heading in headings]


# --- errors ---------------------------------------------------------------------------------------


def test_unreadable_file_error_is_a_raggity_error_with_the_reason_as_message() -> None:
    error = UnreadableFileError("binary file")
    assert isinstance(error, RaggityError)
    assert str(error) == "binary file"


def test_zero_byte_file_is_empty(tmp_path: Path) -> None:
    assert reason(write(tmp_path / "a.txt", b"")) == "empty file"
    assert reason(write(tmp_path / "a.md", b"")) == "empty file"
    assert reason(write(tmp_path / "a.html", b"")) == "empty file"


def test_whitespace_only_file_has_no_text(tmp_path: Path) -> None:
    assert reason(write(tmp_path / "a.txt", " \n\t\r\n  \n")) == "no text"
    assert reason(write(tmp_path / "a.md", "\n\n   \n")) == "no text"
    assert reason(write(tmp_path / "a.html", "<html><script>x()</script> <p>  </p></html>")) == "no text"


def test_whitespace_only_file_has_no_text_even_when_streamed(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", " \n" * 5000)
    with pytest.raises(UnreadableFileError, match="no text"):
        list(read_file(path, segment_chars=10))


def test_nul_bytes_in_the_first_8_kib_make_a_binary_file(tmp_path: Path) -> None:
    assert reason(write(tmp_path / "a.txt", b"hello\x00world")) == "binary file"
    assert reason(write(tmp_path / "b.py", bytes(range(256)) * 4)) == "binary file"
    assert reason(write(tmp_path / "c.md", b"# Title\n" + b"\x89PNG\x00\x00" * 10)) == "binary file"


def test_nul_bytes_after_the_first_8_kib_do_not(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", b"a" * 9000 + b"\x00tail")
    assert read_one(path).text.endswith("\x00tail")


def test_missing_file_vanished(tmp_path: Path) -> None:
    assert reason(tmp_path / "gone.txt") == "vanished during ingest"
    assert reason(tmp_path / "gone.pdf") == "vanished during ingest"


def test_folder_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "dir.md").mkdir()
    assert reason(tmp_path / "dir.md") == "not a file"


def test_fifo_fails_instead_of_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    assert reason(fifo) == "not a regular file"


def test_permission_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests may run as root, who can read a chmod 000 file, so the refusal is simulated at os.open.
    path = write(tmp_path / "secret.txt", "text")
    real_open = os.open

    def refusing_open(file: object, flags: int, *args: object, **kwargs: object) -> int:
        # The file is opened by its name inside its folder's descriptor (raggity.core.beneath).
        if os.fsdecode(file) == path.name:  # type: ignore[arg-type]
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refusing_open)
    assert reason(path) == "unreadable: permission denied"


def test_io_error_during_read_is_a_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "a.txt", "text\n" * 100)

    class FailingReader(io.BufferedReader):
        def read(self, size: int | None = -1) -> bytes:
            raise OSError(errno.EIO, "Input/output error")

    def failing_fdopen(fd: int, mode: str) -> io.BufferedReader:
        return FailingReader(io.FileIO(fd, "rb"))

    monkeypatch.setattr(os, "fdopen", failing_fdopen)
    assert reason(path) == "unreadable: input/output error"


def test_segment_chars_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="positive"):
        read_file(write(tmp_path / "a.txt", "x"), segment_chars=0)


# --- encodings and newlines -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("naïve café ☕\n".encode(), "naïve café ☕\n"),
        (codecs.BOM_UTF8 + "café\n".encode(), "café\n"),
        (codecs.BOM_UTF16_LE + "café ☕\n".encode("utf-16-le"), "café ☕\n"),
        (codecs.BOM_UTF16_BE + "café ☕\n".encode("utf-16-be"), "café ☕\n"),
        (codecs.BOM_UTF32_LE + "café 🐍\n".encode("utf-32-le"), "café 🐍\n"),
        (codecs.BOM_UTF32_BE + "café 🐍\n".encode("utf-32-be"), "café 🐍\n"),
        ("café".encode("latin-1"), "café"),
        ("“smart quotes” – and € sign\n".encode("cp1252"), "“smart quotes” – and € sign\n"),
        # 0x81 is undefined in cp1252, so only latin-1 can decode this.
        (b"caf\xe9 \x81\n", "café \x81\n"),
    ],
    ids=["utf8", "utf8-bom", "utf16le", "utf16be", "utf32le", "utf32be", "latin1", "cp1252", "latin1-c1"],
)
def test_encodings(tmp_path: Path, data: bytes, expected: str) -> None:
    assert read_one(write(tmp_path / "a.txt", data)).text == expected


def test_encoding_is_decided_on_the_first_block_and_later_bad_bytes_are_replaced(tmp_path: Path) -> None:
    text = "é" * 40_000 + "\n"  # 80 000 UTF-8 bytes: the first 64 KiB block decides UTF-8
    path = write(tmp_path / "a.txt", text.encode() + b"bad \xff byte\n")
    assert read_one(path).text == text + "bad \ufffd byte\n"


def test_multibyte_character_split_by_block_boundary(tmp_path: Path) -> None:
    text = "a" * 65535 + "€" * 10 + "\n"  # the first "€" straddles the 64 KiB boundary
    assert read_one(write(tmp_path / "a.txt", text.encode())).text == text


def test_utf16_needs_its_bom_else_it_is_binary(tmp_path: Path) -> None:
    assert reason(write(tmp_path / "a.txt", "hello".encode("utf-16-le"))) == "binary file"


def test_newlines_are_normalised(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", b"one\r\ntwo\rthree\nfour\r\n\r\nsix\r")
    assert read_one(path).text == "one\ntwo\nthree\nfour\n\nsix\n"


def test_crlf_split_across_blocks_is_one_newline() -> None:
    pieces = list(decode_blocks([b"one\r", b"\ntwo\r", b"\r\nthree"]))
    assert "".join(pieces) == "one\ntwo\n\nthree"


def test_utf16_crlf_is_normalised(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", codecs.BOM_UTF16_LE + "a\r\nb\r\n".encode("utf-16-le"))
    assert read_one(path).text == "a\nb\n"


def test_markdown_and_html_use_the_same_decoding(tmp_path: Path) -> None:
    assert read_one(write(tmp_path / "a.md", "# Café\r\n".encode("latin-1"))).text == "# Café\n"
    html = write(tmp_path / "a.html", codecs.BOM_UTF16_LE + "<p>café</p>".encode("utf-16-le"))
    assert read_one(html).text == "café"


# --- plain text, code, streaming ------------------------------------------------------------------


def test_plain_text_document(tmp_path: Path) -> None:
    path = write(tmp_path / "notes.txt", "first line\nsecond line\n")
    document = read_one(path)
    assert document == Document(source=str(path), text="first line\nsecond line\n", kind="text")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("a.md", "markdown"),
        ("a.MARKDOWN", "markdown"),
        ("a.text", "text"),
        ("README", "text"),
        ("LICENSE", "text"),
        ("a.rst", "rst"),
        ("a.htm", "html"),
        ("a.go", "code"),
        ("a.yaml", "code"),
        ("Makefile", "code"),
        ("Dockerfile", "code"),
        ("notes.unknown", "text"),
    ],
)
def test_kind_follows_the_file_name(tmp_path: Path, name: str, kind: str) -> None:
    assert read_one(write(tmp_path / name, "plain words\n")).kind == kind


def test_code_text_is_unchanged_and_python_definitions_are_headings(tmp_path: Path) -> None:
    source = 'import os\n\n\nclass Store:\n    def get(self):\n        pass\n\n\nasync def main():\n    """# not a heading"""\n'
    document = read_one(write(tmp_path / "mod.py", source))
    assert document.kind == "code"
    assert document.text == source
    named = [heading for heading in document.headings if heading.title]
    assert titles(tuple(named)) == [(1, "class Store"), (2, "def get"), (1, "async def main")]
    for heading in named:
        assert document.text[heading.offset :].lstrip().startswith(heading.title.split()[0])


def test_code_without_a_grammar_has_no_headings(tmp_path: Path) -> None:
    assert read_one(write(tmp_path / "a.rb", "class A\nend\ndef f = 1\n")).headings == ()


def test_huge_single_line_file(tmp_path: Path) -> None:
    line = "word " * 1_000_000  # 5 MB, no newline at all
    path = write(tmp_path / "big.txt", line)
    documents = list(read_file(path))
    assert [d.text for d in documents] == [line]
    # Smaller segments cannot cut a line, so the single line stays one segment.
    assert [d.text for d in read_file(path, segment_chars=1000)] == [line]


def test_large_file_is_streamed_in_line_aligned_segments(tmp_path: Path) -> None:
    lines = [f"line {n} " + "x" * (n % 37) + "\n" for n in range(20_000)]
    text = "".join(lines)
    path = write(tmp_path / "big.py", text.replace("\n", "\r\n"))
    documents = list(read_file(path, segment_chars=50_000))
    assert len(documents) > 5
    assert "".join(d.text for d in documents) == text
    newlines = 0
    for document in documents:
        assert document.kind == "code"
        assert document.source == str(path)
        assert document.text.endswith("\n")
        assert len(document.text) <= 50_000
        assert document.line_offset == newlines
        # line_offset names the file line where the segment starts.
        assert document.text.split("\n", 1)[0] + "\n" == lines[newlines]
        newlines += document.text.count("\n")


def test_segment_boundaries_fall_between_lines_even_with_tiny_segments(tmp_path: Path) -> None:
    text = "aa\nbbbbbbbbbbbb\nc\n\nddd"
    documents = list(read_file(write(tmp_path / "a.txt", text), segment_chars=4))
    assert [(d.text, d.line_offset) for d in documents] == [
        ("aa\n", 0),
        ("bbbbbbbbbbbb\n", 1),
        ("c\n\n", 2),
        ("ddd", 4),
    ]


def test_small_file_is_one_segment(tmp_path: Path) -> None:
    documents = list(read_file(write(tmp_path / "a.txt", "a\nb\n"), segment_chars=4))
    assert [(d.text, d.line_offset) for d in documents] == [("a\nb\n", 0)]


def test_blank_lines_join_the_text_that_follows(tmp_path: Path) -> None:
    text = "\n" * 10 + "text\n" + " \n" * 5 + "more\n\n\n\n"
    documents = list(read_file(write(tmp_path / "a.txt", text), segment_chars=3))
    assert [(d.text, d.line_offset) for d in documents] == [
        ("\n" * 10 + "text\n", 0),
        (" \n" * 5 + "more\n\n\n\n", 11),
    ]


def test_streamed_python_headings_are_relative_to_their_segment(tmp_path: Path) -> None:
    text = "def a():\n    pass\n" * 3 + "class B:\n    pass\n"
    documents = list(read_file(write(tmp_path / "m.py", text), segment_chars=20))
    for document in documents:
        for heading in document.headings:
            assert document.text[heading.offset :].startswith(heading.title)
    assert sum(len(d.headings) for d in documents) == 4


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(st.text(alphabet="ab \n\r", max_size=30), max_size=20),
    segment_chars=st.integers(min_value=1, max_value=40),
)
def test_segments_always_reassemble_with_exact_line_offsets(pieces: list[str], segment_chars: int) -> None:
    text = "".join(pieces)
    if not text.strip():
        with pytest.raises(UnreadableFileError):
            list(segment(pieces, segment_chars))
        return
    parts = list(segment(pieces, segment_chars))
    assert "".join(part.text for part in parts) == text
    for part, following in itertools.pairwise(parts):
        assert part.text.endswith("\n")
        assert following.line_offset == part.line_offset + part.text.count("\n")
    for part in parts:
        assert part.text.strip()
        # Longer than the limit only for a single line with the blank lines before it; the last
        # segment also takes the blank lines that end the file.
        core = part.text.rstrip() if part is parts[-1] else part.text
        assert len(core) <= segment_chars or "\n" not in part.text.strip()
    assert parts[0].line_offset == 0


@settings(max_examples=200, deadline=None)
@given(data=st.binary(min_size=2, max_size=200), cut=st.integers(1, 199), step=st.integers(1, 7))
def test_decoding_does_not_depend_on_later_block_boundaries(data: bytes, cut: int, step: int) -> None:
    # The first block decides the encoding; how the rest is split into blocks must not matter.
    head, tail = data[: min(cut, len(data) - 1)], data[min(cut, len(data) - 1) :]
    try:
        whole = "".join(decode_blocks([head, tail]))
    except UnreadableFileError:
        return
    pieces = [tail[i : i + step] for i in range(0, len(tail), step)]
    assert "".join(decode_blocks([head, *pieces])) == whole
    assert "\r" not in whole


# --- markdown -------------------------------------------------------------------------------------

MARKDOWN = """---
title: Front matter
# not: a heading
---
# Install

Some text.

## Build the *thing* ##

```bash
# a shell comment, not a heading
echo hi
```

~~~~
## still code
~~~
## still code after a shorter fence
~~~~

    # indented code, not a heading

Setext One
==========

Setext Two
----------

- a list item
---

#hashtag is not a heading
####### seven is too many
   ### Three spaces indent ok
"""


def test_markdown_text_is_unchanged_and_headings_found(tmp_path: Path) -> None:
    document = read_one(write(tmp_path / "doc.md", MARKDOWN))
    assert document.text == MARKDOWN
    assert document.kind == "markdown"
    assert titles(document.headings) == [
        (1, "Install"),
        (2, "Build the *thing*"),
        (1, "Setext One"),
        (2, "Setext Two"),
        (3, "Three spaces indent ok"),
    ]
    for heading in document.headings:
        line = MARKDOWN[heading.offset :].split("\n", 1)[0]
        assert heading.offset == 0 or MARKDOWN[heading.offset - 1] == "\n"
        assert heading.title in line


def test_markdown_heading_offsets_are_line_starts() -> None:
    text = "intro\n\n# One\ntext\n\nTwo\n===\n"
    assert markdown_headings(text) == (Heading(7, 1, "One"), Heading(19, 1, "Two"))


def test_markdown_crlf_offsets_match_the_normalised_text(tmp_path: Path) -> None:
    document = read_one(write(tmp_path / "a.md", "intro\r\n\r\n## Two\r\n"))
    assert document.headings == (Heading(offset=7, level=2, title="Two"),)
    assert document.text[7:13] == "## Two"


def test_markdown_unclosed_front_matter_is_a_rule_not_front_matter() -> None:
    assert titles(markdown_headings("---\n# Real heading\n")) == [(1, "Real heading")]


def test_markdown_toml_front_matter_is_skipped() -> None:
    assert titles(markdown_headings("+++\n# title = 'x'\n+++\n# Real\n")) == [(1, "Real")]


def test_markdown_unclosed_fence_hides_the_rest() -> None:
    assert titles(markdown_headings("# A\n```\n# B\n")) == [(1, "A")]


def test_markdown_backtick_line_with_backticks_in_info_is_not_a_fence() -> None:
    assert titles(markdown_headings("``` inline ` code\n# Heading\n")) == [(1, "Heading")]


# --- reStructuredText -----------------------------------------------------------------------------

RST = """=========
 Project
=========

Intro paragraph.

Install
=======

Text.

From source
-----------

Details.

Usage
=====

::

    Literal
    =======

A paragraph line
================

----------

Notes
~~~~~
"""


def test_rst_headings_levels_follow_first_appearance(tmp_path: Path) -> None:
    document = read_one(write(tmp_path / "doc.rst", RST))
    assert document.text == RST
    assert document.kind == "rst"
    assert titles(document.headings) == [
        (1, "Project"),
        (2, "Install"),
        (3, "From source"),
        (2, "Usage"),
        (2, "A paragraph line"),
        (4, "Notes"),
    ]
    assert document.headings[0].offset == 0
    assert RST[document.headings[1].offset :].startswith("Install\n")
    assert RST[document.headings[3].offset :].startswith("Usage\n")


def test_rst_underline_shorter_than_title_is_not_a_title() -> None:
    assert rst_headings("\nLong title here\n===\n") == ()


def test_rst_title_must_start_a_block() -> None:
    assert rst_headings("paragraph line\nTitle\n=====\n") == ()


def test_rst_overline_and_underline_is_a_different_style_from_underline_only() -> None:
    text = "Part\n====\n\n=====\nOver\n=====\n\nPart two\n========\n"
    assert titles(rst_headings(text)) == [(1, "Part"), (2, "Over"), (1, "Part two")]


# --- HTML -----------------------------------------------------------------------------------------

HTML = """<!DOCTYPE html>
<html>
<head>
  <meta charset="utf-8">
  <title>Page   title</title>
  <style>body { color: red }</style>
  <script>var hidden = "script text";</script>
</head>
<body>
  <noscript>enable js</noscript>
  <template><p>template text</p></template>
  <h1>Main   heading</h1>
  <p>First   paragraph
     spans lines &amp; has <b>bold</b> text.</p>
  <div>A div<br>after break</div>
  <h2 id="x">Second <em>heading</em></h2>
  <ul><li>one</li><li>two</li></ul>
  <pre>
keep   spacing
  indented</pre>
  <table><tr><th>Name</th><th>Age</th></tr><tr><td> Ann </td><td>31</td></tr></table>
  <!-- a comment -->
  <h3></h3>
  <p>End.</p>
</body>
</html>
"""

HTML_TEXT = """Main heading

First paragraph spans lines & has bold text.

A div
after break

Second heading

- one
- two

keep   spacing
  indented

Name | Age
Ann | 31

End."""


def test_html_visible_text_and_headings(tmp_path: Path) -> None:
    document = read_one(write(tmp_path / "page.html", HTML))
    assert document.kind == "html"
    assert document.text == HTML_TEXT
    assert titles(document.headings) == [(1, "Main heading"), (2, "Second heading")]
    for heading in document.headings:
        assert document.text[heading.offset :].startswith(heading.title)
        assert heading.offset == 0 or document.text[heading.offset - 1] == "\n"


@pytest.mark.parametrize("hidden", ["script text", "color: red", "enable js", "template text", "comment"])
def test_html_hidden_content_is_dropped(tmp_path: Path, hidden: str) -> None:
    assert hidden not in read_one(write(tmp_path / "page.html", HTML)).text


def test_html_meta_charset_decides_the_encoding(tmp_path: Path) -> None:
    page = '<html><head><meta charset="windows-1251"></head><body><p>Привет</p></body></html>'
    assert read_one(write(tmp_path / "a.html", page.encode("cp1251"))).text == "Привет"


def test_html_http_equiv_charset(tmp_path: Path) -> None:
    page = '<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"><p>déjà vu</p>'
    assert read_one(write(tmp_path / "a.htm", page.encode("latin-1"))).text == "déjà vu"


def test_html_unknown_charset_falls_back_to_detection(tmp_path: Path) -> None:
    page = '<meta charset="no-such-codec"><p>ünïcode</p>'
    assert read_one(write(tmp_path / "a.html", page.encode())).text == "ünïcode"


def test_html_without_head_or_body_tags(tmp_path: Path) -> None:
    assert read_one(write(tmp_path / "a.html", "plain <i>words</i>\n\n here")).text == "plain words here"


@pytest.mark.parametrize(
    ("page", "text"),
    [
        ("a<br><br>b", "a\n\nb"),
        ("a&nbsp;&nbsp; b&lt;c&#x41;", "a b<cA"),
        ("<p>x<b>y</b>z</p><p>w</p>", "xyz\n\nw"),
        ("<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>", "- a\n\n- b\n\n- c"),
        ("<table><td>a</td><td>b</td></table><table><td>c</td></table>", "a | b\n\nc"),
        # A row stays one line when its cells hold blocks, as Sphinx writes every cell (<td><p>..</p></td>).
        (
            "<table><tr><th><p>Op</p></th><th><p>Result</p></th></tr>"
            "<tr><td><p>x in s</p></td><td><p>True if <em>x</em> is</p><p>in s</p><br><pre>a\nb</pre></td></tr></table>",
            "Op | Result\nx in s | True if x is in s a b",
        ),
        # A row of one cell is a paragraph, as DocBook lists functions: signature, text, example.
        (
            "<table><tr><td><p>abs(x)</p><p>Absolute value.</p></td></tr><tr><td><p>cbrt(x)</p></td></tr></table>",
            "abs(x) Absolute value.\n\ncbrt(x)",
        ),
        ("<table><tr><td>a</td><td><h3>T</h3>b</td></tr></table>", "a | T b"),
        ("<pre>\n  x\n\n  y</pre>after", "  x\n\n  y\n\nafter"),
    ],
)
def test_html_layout(tmp_path: Path, page: str, text: str) -> None:
    assert read_one(write(tmp_path / "a.html", page)).text == text


def test_html_a_heading_inside_a_table_cell_is_part_of_its_row_not_a_heading(tmp_path: Path) -> None:
    document = read_one(
        write(tmp_path / "a.html", "<h2>Types</h2><table><tr><td>a</td><td><h3>T</h3>b</td></tr></table>")
    )
    assert document.text == "Types\n\na | T b"
    assert titles(document.headings) == [(2, "Types")]


def test_html_malformed_marked_section_is_a_comment_as_in_a_browser(tmp_path: Path) -> None:
    # The standard library parser raised AssertionError here; an HTML5 parser makes it a bogus comment.
    assert read_one(write(tmp_path / "a.html", "<p>x</p><![foo[ bar ]]>")).text == "x"
