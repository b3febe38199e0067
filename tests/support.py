"""Shared helpers for end-to-end tests: a small config writer and a corpus of distinct topics."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tomli_w

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.store.bm25_index import Bm25Reader
from raggity.store.layout import IndexLayout
from raggity.store.manifest import load_manifest
from raggity.store.vector_table import VectorTableReader
from tests.ingest.test_pdf import make_pdf
from tests.isolation import isolated_state

# -- the installed `rag` console script, run as a user runs it ------------------------------------
RAG = Path(sys.executable).parent / "rag"
CHECKOUT = Path(__file__).resolve().parents[1]


def this_checkout(env: dict[str, str]) -> dict[str, str]:
    """`env` with this checkout first on PYTHONPATH: the console script may belong to another worktree."""
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(CHECKOUT), env.get("PYTHONPATH")]))}


def interruptible(args: Sequence[str], **popen: Any) -> subprocess.Popen[str]:
    """`subprocess.Popen(args, text=True, **popen)` of a child that Ctrl-C reaches as it would from a
    terminal. A run of the suite started in the background by a script (`make test &`) has SIGINT
    ignored, and an ignored signal stays ignored through exec: the child would never see the
    interrupt a test sends it, and exit 0. A handler is reset to the default at exec instead."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(args, text=True, **popen)
    finally:
        signal.signal(signal.SIGINT, previous)


def rag(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RAG), *args],
        cwd=cwd,
        env=this_checkout(env if env is not None else dict(os.environ)),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def assert_clean_error(stderr: str) -> str:
    """One `error:` line, at most a `fix:` line after it, and no traceback; returns the error line."""
    assert "Traceback" not in stderr
    [line] = error_lines(stderr)
    rest = [x for x in stderr.splitlines() if x.strip() and x != line]
    assert all(x.startswith("  fix: ") for x in rest), stderr
    assert len(rest) <= 1, stderr
    return line


# Fast defaults for tests: the 135M generator with short answers, and no cross-encoder.
DEFAULTS: dict[str, dict[str, Any]] = {
    "generation": {"model": "smollm2-135m-instruct", "max_tokens": 48},
    "retrieval": {"rerank": False},
}


def write_config(folder: Path, **sections: dict[str, Any]) -> Path:
    """Writes folder/raggity.toml: DEFAULTS merged key by key with `sections` (one dict per [section])."""
    data: dict[str, dict[str, Any]] = {name: dict(values) for name, values in DEFAULTS.items()}
    for name, values in sections.items():
        data.setdefault(name, {}).update(values)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "raggity.toml"
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    return path


INSTALL_MD = """\
# Frobnicator

Frobnicator is a command line tool that tidies configuration files.

## Installing on Linux

On Linux, frobnicator needs 2 GB of free disk space. Download its tarball,
unpack it into /opt/frobnicator and add its bin folder to your PATH.

## Installing on macOS

On macOS install it with Homebrew: run brew install frobnicator in a terminal.
Apple silicon and Intel Macs are both supported.
"""

SOURDOUGH_TXT = """\
Sourdough starter care

A levain is a mix of flour and water colonised by wild yeasts and lactic acid bacteria.
Feed the starter every day with equal weights of rye flour and water.

The bulk rise takes four to six hours at 24 degrees Celsius, until the mass has grown by half.
A cold retard in the refrigerator overnight gives a more sour loaf.

Shape the loaf, proof it in a floured banneton, then bake it at 250 degrees in a Dutch oven.
"""

JUPITER_RST = """\
Galilean satellites
===================

Jupiter, the biggest world in the solar system, is circled by four large satellites
that Galileo Galilei discovered in 1610.

Io
--

Io is volcanically active, with hundreds of erupting volcanoes fed by tidal heating.

Europa and Ganymede
-------------------

Europa hides a salty ocean below its icy crust. Ganymede is bigger than Mercury
and has its own magnetic field. Callisto is heavily cratered.
"""

HTML_SCRIPT_SECRET = "quixotic marmalade beacon"

ROTATION_HTML = f"""\
<!DOCTYPE html>
<html>
<head>
<title>Security policy</title>
<script>var banner = "{HTML_SCRIPT_SECRET} zeppelin";</script>
</head>
<body>
<h1>API token rotation</h1>
<p>Every API token must be rotated every 30 days. Revoke an old token once its replacement works.</p>
<p>Tokens are stored in a secrets vault, never in source control.</p>
<script>trackVisitor("{HTML_SCRIPT_SECRET} telemetry");</script>
</body>
</html>
"""

INVOICE_PY = '''\
"""Invoice helpers."""

VAT_RATE = 0.2


def invoice_total_with_tax(subtotal: float, rate: float = VAT_RATE) -> float:
    """Return the invoice total including value added tax at the given rate."""
    return round(subtotal * (1 + rate), 2)
'''

PDF_PAGE_TWO_FACT = "The observatory telescope mirror is recoated with aluminium every eighteen months."

PDF_PAGES = [
    [
        "Observatory operations handbook.",
        "This handbook describes daily routines for night staff.",
        "Staff open dome shutters at dusk and record weather readings before observing.",
        "A control room must stay dark so that eyes adapt to darkness.",
    ],
    [
        PDF_PAGE_TWO_FACT,
        "Recoating takes place in a vacuum chamber in a basement workshop.",
        "During recoating this instrument is offline for about one week.",
    ],
    [
        "Visitors are welcome on Saturday evenings during summer.",
        "Guided tours start at nine and last about one hour.",
        "Children under twelve must be accompanied by an adult at all times.",
    ],
]


def write_corpus(folder: Path) -> dict[str, Path]:
    """Writes one file per topic and format into `folder`; returns them by short name."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = {
        "markdown": ("install.md", INSTALL_MD),
        "text": ("sourdough.txt", SOURDOUGH_TXT),
        "rst": ("jupiter.rst", JUPITER_RST),
        "html": ("rotation.html", ROTATION_HTML),
        "python": ("invoice.py", INVOICE_PY),
    }
    paths: dict[str, Path] = {}
    for name, (filename, text) in texts.items():
        path = folder / filename
        path.write_text(text, encoding="utf-8")
        paths[name] = path.resolve()
    pdf = folder / "observatory.pdf"
    pdf.write_bytes(make_pdf(PDF_PAGES))
    paths["pdf"] = pdf.resolve()
    return paths


def ingested_corpus(
    root: Path, state_dirs: dict[str, Path], **sections: dict[str, Any]
) -> tuple[Path, dict[str, Path], Raggity]:
    """For module-scoped fixtures: a config under `root` with its index in root/index (DEFAULTS merged
    with `sections`), and write_corpus ingested with it; returns the config, the files, the session."""
    config = write_config(root, index={"path": str(root / "index")}, **sections)
    docs = write_corpus(root / "docs")
    with isolated_state(state_dirs):
        session = Raggity(load_config(config))
        session.ingest([root / "docs"])
    return config, docs, session


def line_range(path: Path, sentence: str) -> tuple[int, int]:
    """1-based first and last line of `sentence` in the file (the sentence may span lines)."""
    text = path.read_text(encoding="utf-8")
    at = text.index(sentence)
    first = text.count("\n", 0, at) + 1
    return first, first + sentence.count("\n")


def store_ids(layout: IndexLayout) -> set[str]:
    """The live chunk ids, after checking that LanceDB, Tantivy and the manifest list exactly the same ones."""
    table = VectorTableReader(layout.table).all_ids()
    bm25 = Bm25Reader(layout.tantivy).all_ids()
    live = load_manifest(layout.manifest).live_ids()
    assert len(table) == len(set(table)), "duplicate rows in LanceDB"
    assert set(table) == live, f"LanceDB {len(table)} ids vs manifest {len(live)}"
    assert bm25 == live, f"Tantivy {len(bm25)} ids vs manifest {len(live)}"
    return live


Messages = Sequence[dict[str, str]]


def must_not_generate(_: Messages) -> str:
    """A ScriptedGenerator script for paths that must never reach the model."""
    raise AssertionError("the generator must not be used")


# Invented jobs and what each does, one chunk each: a corpus whose questions only its own chunk
# answers (the corpus-calibration tests write their questions and answers from it).
JOB_TOOLS = [
    ("grindle", "rotates the logs of every service once a night"),
    ("plonker", "copies backups to the tape library on Sundays"),
    ("wuzzle", "renews the TLS certificates thirty days before they expire"),
    ("brantle", "restarts a worker that stopped answering its health check"),
    ("quiffer", "compresses the archive folder with zstd at level 19"),
    ("snorkel", "mirrors the package cache from the primary site"),
    ("trundle", "deletes temporary files older than a week"),
    ("zoober", "checks the disks for errors after every reboot"),
    ("flimmer", "sends the nightly report to the operators' mailbox"),
    ("gazump", "rebuilds the search index when the schema changes"),
    ("hoopla", "pins the kernel version on the database hosts"),
    ("jiggle", "balances the queue between the two brokers"),
    ("kerfuffle", "exports the metrics to the dashboard every minute"),
    ("lollop", "locks an account after five failed logins"),
]


def found_in_every_mode(session: Raggity, query: str) -> set[str]:
    """The chunk ids a search for `query` returns in hybrid, dense and keyword mode (50 each, no
    re-ranking); each mode must find something."""
    found: set[str] = set()
    for mode in ("hybrid", "dense", "bm25"):
        ids = [c.chunk.id for c in session.search(query, k=50, mode=mode, rerank=False).candidates]
        assert ids, f"{mode}: nothing found"
        found |= set(ids)
    return found
