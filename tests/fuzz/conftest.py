"""The fuzz suite's settings, hostile values and shared index.

Profiles: `fuzz` (the default: few examples, so that the whole folder runs in about a minute on two
cores) and `long` (HYPOTHESIS_PROFILE=long, for a night run). They are applied by each test's
`@FUZZ` decorator rather than loaded globally, so that the rest of the suite keeps its own settings.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from raggity.core.protocols import Embedder
from tests.support import CHECKOUT, ingested_corpus

settings.register_profile(
    "fuzz",
    max_examples=12,
    deadline=None,
    # Examples share the module's index and the test's tmp folder: that is the point (state that
    # survives a hostile call must still be sound for the next one).
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=False,
)
settings.register_profile(
    "long",
    parent=settings.get_profile("fuzz"),
    max_examples=400,
)
FUZZ = settings.get_profile("long" if os.environ.get("HYPOTHESIS_PROFILE") == "long" else "fuzz")
# A door that starts a process per example (the MCP server) runs fewer, longer examples.
FUZZ_FEW = settings(FUZZ, max_examples=max(2, FUZZ.max_examples // 6))

# -- hostile values -----------------------------------------------------------------------------
# Terminal escapes (CSI, OSC title, 8-bit CSI), line tricks, bidi overrides, invisible characters,
# markup that rich or Markdown would obey, shell and format metacharacters, path tricks.
TRICKS = [
    "\x1b[2J",
    "\x1b]0;pwned\x07",
    "\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\",
    "\x9b31m",
    "\x85",
    "\r",
    "\n",
    "\t",
    "\x7f",
    "\x08",
    "\u202e",
    "\u2066",
    "\u200b",
    "\ufeff",
    "\u2028",
    "[red]x[/red]",
    "[link=http://evil]x[/link]",
    "%s%n",
    "{0}",
    "$(id)",
    "`id`",
    "; rm -rf ~",
    "../",
    "../../etc/passwd",
    "/etc/passwd",
    "~",
    "*",
    "-",
    "--json",
    "-h",
    "'",
    '"',
    "\\",
    "0",
    "-1",
    "1e999",
    "nan",
    "9" * 30,
    "é",
    "日本語",
    "🦦",
]
# Bytes a terminal in another encoding sends: Python keeps them in argv as U+DC80-U+DCFF.
UNDECODABLE = ["\udce9", "\udcff", "\udc80"]

_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)


def hostile(*, nul: bool, undecodable: bool, long: bool = True) -> st.SearchStrategy[str]:
    """Text a hostile user or file passes: pieces of TRICKS and any Unicode, joined."""
    pieces = [*TRICKS, *(["\x00"] if nul else []), *(UNDECODABLE if undecodable else [])]
    joined = st.lists(st.one_of(st.sampled_from(pieces), _TEXT), max_size=6).map("".join)
    options = [joined, st.sampled_from(["", " ", "   \t "])]
    if long:
        options.append(
            st.builds(lambda s, n: (s or "x") * n, st.sampled_from(pieces), st.integers(500, 3000))
        )
    strategy = st.one_of(*options)
    return strategy if nul else strategy.map(lambda s: s.replace("\x00", ""))


# ESC and the C1 controls (8-bit CSI among them): none may reach a terminal from data.
ESCAPES = re.compile("[\x1b\x80-\x9f]")
# Documented in docs/quickstart.md#exit-codes; 70 is an internal error (a bug) and never fine here.
EXIT_CODES = frozenset(range(10))


def damaged(seed: bytes, data: st.DataObject) -> bytes:
    """`seed` with up to 8 bytes flipped, then perhaps cut short: a damaged copy of a real file."""
    damaged_bytes = bytearray(seed)
    for _ in range(data.draw(st.integers(0, 8))):
        damaged_bytes[data.draw(st.integers(0, len(damaged_bytes) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(damaged_bytes)))
    return bytes(damaged_bytes[:cut] if data.draw(st.booleans()) else damaged_bytes)


def assert_no_escapes(*streams: str) -> None:
    for text in streams:
        found = ESCAPES.search(text)
        assert found is None, f"raw {found.group()!r} reached the terminal: {text[:300]!r}"


# Written into the checkout by the tools running the suite, never by raggity.
_TOOL_CACHES = frozenset(
    {".hypothesis", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".import_linter_cache"}
)


def outside_snapshot() -> dict[str, object]:
    """What a run must never touch outside pytest's tmp folders: the checkout and the home folder
    (a stray `.raggity` index or a `raggity.toml` there would show)."""
    home = Path.home()
    return {
        "checkout": sorted(p.name for p in CHECKOUT.iterdir() if p.name not in _TOOL_CACHES),
        "home": sorted(p.name for p in home.iterdir() if p.name not in _TOOL_CACHES) if home.is_dir() else [],
    }


def tree(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under `folder` with its size and mtime: equal before and after means untouched."""
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file()
    }


@dataclass(frozen=True)
class Indexed:
    root: Path
    config: Path
    index: Path
    docs: dict[str, Path]
    embedder: Embedder


@pytest.fixture(scope="session")
def indexed(tmp_path_factory: pytest.TempPathFactory, _state_dirs: dict[str, Path]) -> Indexed:
    """The test corpus ingested once for every door's fuzz test (read-only doors only use it)."""
    root = tmp_path_factory.mktemp("fuzz")
    config, docs, session = ingested_corpus(
        root,
        _state_dirs,
        ingest={"chunk_tokens": 64, "parent_tokens": 256},
        retrieval={"top_k": 2},
        generation={"threads": 1, "cache": False},
    )
    return Indexed(root, config, root / "index", docs, session.models.embedder)
