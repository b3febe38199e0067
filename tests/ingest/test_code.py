"""Code as code: chunks at function and class boundaries, symbol trails, and file line ranges."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from raggity.core.types import Chunk, Document
from raggity.documents.chunker import ChunkingSettings, chunk_document
from raggity.documents.readers import read_file
from tests.ingest.test_html import tokenizer

PYTHON = '''\
import os

LIMIT = 3


class Store:
    """Keeps things."""

    size = 0

    @property
    def full(self) -> bool:
        return self.size >= LIMIT

    async def refresh(self) -> None:
        def helper() -> None:
            pass

        helper()


# Where retries are handled.
def retry(times: int) -> None:
    for _ in range(times):
        os.sync()
'''


def chunks_of(path: Path, chunk_tokens: int = 256) -> tuple[Document, list[Chunk]]:
    [document] = read_file(path)
    settings = ChunkingSettings(chunk_tokens=chunk_tokens, parent_tokens=chunk_tokens)
    return document, chunk_document(document, tokenizer(), settings)


def file_lines(path: Path, chunk: Chunk) -> str:
    lines = path.read_text(encoding="utf-8").split("\n")
    return "\n".join(lines[chunk.location.line_start - 1 : chunk.location.line_end])


def test_python_chunks_follow_definitions_with_their_symbol_trail(tmp_path: Path) -> None:
    path = tmp_path / "store.py"
    path.write_text(PYTHON, encoding="utf-8")
    _, chunks = chunks_of(path)
    assert [(c.heading, str(c.location)) for c in chunks] == [
        ("", "lines 1-3"),
        ("class Store", "lines 6-9"),
        ("class Store > def full", "lines 11-13"),
        ("class Store > async def refresh", "lines 15-19"),
        ("def retry", "lines 22-25"),
    ]
    for chunk in chunks:
        # Line ranges are the file's own lines: the cited lines hold exactly the chunk's text.
        assert file_lines(path, chunk) == chunk.text.strip("\n")


def test_an_inner_helper_stays_inside_its_function(tmp_path: Path) -> None:
    path = tmp_path / "store.py"
    path.write_text(PYTHON, encoding="utf-8")
    _, chunks = chunks_of(path)
    assert not any("helper" in c.heading for c in chunks)
    assert "def helper" in next(c for c in chunks if c.heading.endswith("refresh")).text


def test_an_oversized_function_is_split_inside_its_boundary(tmp_path: Path) -> None:
    body = "".join(f"    total += compute_value_number_{n}(argument_{n})\n" for n in range(60))
    path = tmp_path / "big.py"
    path.write_text(f"def small():\n    pass\n\n\ndef big():\n    total = 0\n{body}    return total\n")
    _, chunks = chunks_of(path, chunk_tokens=64)
    big = [c for c in chunks if c.heading == "def big"]
    assert len(big) > 3
    assert all(c.n_tokens <= 64 for c in big)
    assert big[0].location.line_start == 5
    assert big[-1].location.line_end == 67
    assert [c.heading for c in chunks if c.heading != "def big"] == ["def small"]


SAMPLES = {
    "shapes.ts": (
        """\
        // Adds two numbers.
        export function add(a: number, b: number): number {
          return a + b;
        }
        export const twice = (x: number) => x * 2;
        export class Shape {
          area(): number { return 0; }
        }
        interface Point { x: number }
        """,
        ["function add", "function twice", "class Shape", "class Shape > method area", "interface Point"],
    ),
    "app.js": (
        """\
        class Router {
          handle(request) { return request; }
        }
        function start() {}
        """,
        ["class Router", "class Router > method handle", "function start"],
    ),
    "server.go": (
        """\
        package main

        // Handle serves one request.
        func (s *Server) Handle(w int) error {
            return nil
        }

        type Server struct{ x int }
        """,
        ["", "func (s *Server) Handle", "type Server"],
    ),
    "lib.rs": (
        """\
        /// Makes one.
        pub fn make() -> S { S {} }

        impl Display for S {
            fn fmt(&self) {}
        }
        """,
        ["fn make", "impl Display for S", "impl Display for S > fn fmt"],
    ),
    "Account.java": (
        """\
        /** An account. */
        public class Account {
            public Account() {}

            @Override
            public String toString() { return ""; }
        }
        """,
        ["class Account", "class Account > constructor Account", "class Account > method toString"],
    ),
    "main.c": (
        """\
        #include <stdio.h>
        /* Entry point. */
        static int *parse(int a) { return 0; }
        struct Point { int x; };
        """,
        ["", "function parse", "struct Point"],
    ),
    "shapes.cpp": (
        """\
        namespace geo {
        class Circle {
         public:
          double area() { return 0; }
        };
        }
        """,
        ["namespace geo", "namespace geo > class Circle", "namespace geo > class Circle > function area"],
    ),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_language_gets_symbol_trails(tmp_path: Path, name: str) -> None:
    source, trails = SAMPLES[name]
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    _, chunks = chunks_of(path)
    assert [c.heading for c in chunks] == trails
    for chunk in chunks:
        assert file_lines(path, chunk) == chunk.text.strip("\n")


def test_doc_comment_above_a_definition_belongs_to_it(tmp_path: Path) -> None:
    path = tmp_path / "store.py"
    path.write_text(PYTHON, encoding="utf-8")
    _, chunks = chunks_of(path)
    assert next(c for c in chunks if c.heading == "def retry").text.startswith("# Where retries are handled.")


def test_language_without_a_grammar_is_read_as_plain_code(tmp_path: Path) -> None:
    path = tmp_path / "tool.rb"
    path.write_text("class Tool\n  def run\n  end\nend\n", encoding="utf-8")
    document, chunks = chunks_of(path)
    assert document.headings == ()
    assert [(c.heading, str(c.location)) for c in chunks] == [("", "lines 1-4")]


def test_python_without_definitions_falls_back_to_plain_text(tmp_path: Path) -> None:
    path = tmp_path / "script.py"
    path.write_text("print('hello')\nx = 1\n", encoding="utf-8")
    document, _ = chunks_of(path)
    assert document.headings == ()


def test_a_file_streamed_in_segments_keeps_top_level_python_headings(tmp_path: Path) -> None:
    path = tmp_path / "long.py"
    path.write_text("def first():\n    pass\n\n\n" + "x = 1\n" * 50 + "\nclass Later:\n    pass\n")
    documents = list(read_file(path, segment_chars=100))
    assert len(documents) > 1
    titles = [h.title for d in documents for h in d.headings]
    assert titles == ["def first", "class Later"]


def test_deeply_nested_preprocessor_blocks_do_not_exhaust_the_stack(tmp_path: Path) -> None:
    path = tmp_path / "deep.c"
    path.write_text("#ifdef A\n" * 5000 + "int f(void) { return 0; }\n" + "#endif\n" * 5000, encoding="utf-8")
    _, chunks = chunks_of(path)
    assert "".join(c.text for c in chunks).count("#ifdef A") == 5000
