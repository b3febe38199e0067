"""`rag search` end to end on a small corpus of distinct topics in every supported format."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from raggity.api.session import Raggity
from raggity.cli.main import app
from raggity.config.loader import load_config
from raggity.pipeline.answer.citations import content_words
from raggity.pipeline.search.hybrid import HybridRetriever, IndexSnapshot, SearchOptions
from raggity.store.bm25_index import Bm25Reader
from raggity.store.vector_table import VectorTableReader
from tests.isolation import isolated_state
from tests.support import (
    HTML_SCRIPT_SECRET,
    PDF_PAGE_TWO_FACT,
    store_ids,
    write_config,
    write_corpus,
)


@dataclass(frozen=True)
class Indexed:
    config: Path
    files: dict[str, Path]
    session: Raggity


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory, _state_dirs: dict[str, Path]) -> Indexed:
    root = tmp_path_factory.mktemp("search")
    with isolated_state(_state_dirs):
        config = write_config(root, ingest={"chunk_tokens": 64})
        files = write_corpus(root / "docs")
        session = Raggity(load_config(config))
        report = session.ingest([root / "docs"])
        assert report.added == len(files)
        assert report.skipped == ()
    return Indexed(config, files, session)


def top_source(indexed: Indexed, query: str) -> str:
    return indexed.session.search(query, k=3).candidates[0].chunk.source


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("frobnicator disk space on Linux", "markdown"),
        ("brew install frobnicator", "markdown"),
        ("levain rye flour starter", "text"),
        ("Galilean satellites Europa Ganymede", "rst"),
        ("API token rotated every 30 days", "html"),
        ("invoice_total_with_tax subtotal", "python"),
    ],
)
def test_keyword_query_finds_the_right_file(indexed: Indexed, query: str, kind: str) -> None:
    assert top_source(indexed, query) == str(indexed.files[kind])


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("how long should dough ferment", "text"),
        ("moons orbiting the largest planet", "rst"),
    ],
)
def test_paraphrased_query_finds_the_right_file(indexed: Indexed, query: str, kind: str) -> None:
    path = indexed.files[kind]
    # No content word in common: only the dense retriever can connect the two.
    assert not content_words(query) & content_words(path.read_text(encoding="utf-8"))
    result = indexed.session.search(query, k=3)
    best = result.candidates[0]
    assert best.chunk.source == str(path)
    assert best.dense_rank == 1


def test_pdf_fact_is_found_on_its_page(indexed: Indexed) -> None:
    best = indexed.session.search("how often is the telescope mirror recoated", k=3).candidates[0]
    assert best.chunk.source == str(indexed.files["pdf"])
    assert str(best.chunk.location) == "page 2"
    assert PDF_PAGE_TWO_FACT in best.chunk.text


def test_html_script_text_is_not_indexed(indexed: Indexed) -> None:
    layout = indexed.session.layout
    ids = store_ids(layout)
    texts = [stored.chunk.text for stored in VectorTableReader(layout.table).fetch(sorted(ids)).values()]
    html_texts = [t for t in texts if "rotated every 30 days" in t]
    assert html_texts, "the visible HTML text is indexed"
    secret_words = HTML_SCRIPT_SECRET.split()
    for word in secret_words:
        assert not any(word in t for t in texts)
        assert Bm25Reader(layout.tantivy).search(word, 10) == []
    found = indexed.session.search(HTML_SCRIPT_SECRET, k=10).candidates
    assert found  # dense search always returns neighbours ...
    assert all(c.bm25_rank is None for c in found)  # ... but no keyword matched
    assert not any(word in c.chunk.text for c in found for word in secret_words)


def cli_json(indexed: Indexed, *args: str) -> list[dict[str, object]]:
    result = CliRunner().invoke(app, ["search", *args, "--json", "--config", str(indexed.config)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, list)
    return data


def test_json_output_shape(indexed: Indexed) -> None:
    results = cli_json(indexed, "API token rotation", "-k", "4")
    assert len(results) == 4
    known = {str(p) for p in indexed.files.values()}
    for item in results:
        assert set(item) >= {"id", "source", "location", "score", "text", "stages"}
        assert isinstance(item["id"], str)
        assert item["source"] in known
        assert isinstance(item["text"], str)
        assert item["text"].strip()
        assert isinstance(item["location"], str)
        if item["source"].endswith(".html"):
            # HTML cites an anchor, or the page itself before any anchor: never extracted-text lines.
            assert item["location"] == "" or item["location"].startswith("#")
        else:
            assert item["location"].startswith(("line ", "lines ", "page ", "pages "))
        stages = item["stages"]
        assert isinstance(stages, dict)
        assert set(stages) >= {"dense_rank", "bm25_rank", "rrf_score"}
        assert stages["dense_rank"] is None or stages["dense_rank"] >= 1
        assert stages["bm25_rank"] is None or stages["bm25_rank"] >= 1
        assert stages["dense_rank"] is not None or stages["bm25_rank"] is not None
        # Without a reranker the score is the fused RRF score.
        assert item["score"] == stages["rrf_score"]
    assert len({item["id"] for item in results}) == len(results)
    assert results[0]["source"] == str(indexed.files["html"])
    scores = [item["score"] for item in results]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] > scores[-1]

    api = indexed.session.search("API token rotation", k=4).candidates
    assert [item["id"] for item in results] == [c.chunk.id for c in api]


@pytest.mark.parametrize("k", [1, 2, 7])
def test_k_is_respected(indexed: Indexed, k: int) -> None:
    assert len(cli_json(indexed, "bake a loaf", "--k", str(k))) == k
    assert len(indexed.session.search("bake a loaf", k=k).candidates) == k


def test_default_k_is_top_k(indexed: Indexed) -> None:
    assert len(cli_json(indexed, "bake a loaf")) == load_config(indexed.config).retrieval.top_k == 5


SEARCH_WITHOUT_LLAMA = """
import json, sys
from typer.testing import CliRunner
from raggity.cli.main import app

result = CliRunner().invoke(app, ["search", "brew install frobnicator", "--json", "--config", sys.argv[1]])
assert result.exit_code == 0, result.output
hits = json.loads(result.stdout)
assert hits, "search returned nothing"
loaded = [m for m in sys.modules if m.split(".")[0] == "llama_cpp" or m == "raggity.inference.llama_runtime"]
rooms = ("raggity.pipeline.answer", "raggity.pipeline.ingest", "raggity.pipeline.graph", "raggity.documents")
other_rooms = [m for m in sys.modules if m.startswith(rooms)]
# Loaded only where they are used: a progress bar (rich's live display), an entity graph.
unused = ("rich.progress", "rich.live", "raggity.retrieval.graph_model", "raggity.retrieval.graph_retriever")
print(json.dumps({"source": hits[0]["source"], "llama": sorted(loaded), "rooms": sorted(other_rooms),
                  "pandas": "pandas" in sys.modules, "unused": sorted(m for m in unused if m in sys.modules)}))
"""


def test_search_never_imports_llama_cpp(indexed: Indexed) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SEARCH_WITHOUT_LLAMA, str(indexed.config)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["source"] == str(indexed.files["markdown"])
    assert report["llama"] == []
    # A cold search pays only for its own room's imports: not the answer, ingest or graph rooms'.
    assert report["rooms"] == []
    # Nor pandas, which pyarrow's dataset module would import on its own (cli/arrow_without_pandas.py).
    assert report["pandas"] is False
    # Nor what only other commands or settings use: progress bars (rag ingest, eval), the entity graph.
    assert report["unused"] == []


A_PROCESS = """
import atexit, gc, sys
from raggity.cli.main import run

sys.argv = ["rag", *sys.argv[1:]]
gc.collect()  # counts from zero, so that no pass falls due before run()'s first line
gc.callbacks.append(lambda phase, info: sys.stderr.write("collector pass\\n") if phase == "start" else None)
atexit.register(lambda: sys.stderr.write("finalized\\n"))
run()
"""


def rag_process(*args: str) -> subprocess.CompletedProcess[str]:
    """`rag ARGS` as its entry point runs it, reporting on stderr each pass of the garbage collector
    and whether Python's finalization ran."""
    return subprocess.run(
        [sys.executable, "-c", A_PROCESS, *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(
    ("command", "short"), [(["search", "brew install frobnicator"], True), (["status"], False)]
)
def test_a_search_process_runs_without_the_garbage_collector_or_finalization_and_other_commands_with_them(
    indexed: Indexed, command: list[str], short: bool
) -> None:
    """A cold search's imports made the collector pass ~110-150 times, and Python's finalization took
    a fifth of the process (cli/short_process.py); every other command, long-running ones included,
    has both."""
    done = rag_process(*command, "--json", "--config", str(indexed.config))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)  # the whole output, flushed before the process ended
    passes = done.stderr.count("collector pass")
    assert (passes == 0) is short, passes
    assert ("finalized" in done.stderr) is not short


def test_a_search_that_fails_ends_with_its_exit_code_and_message(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    done = rag_process("search", "anything", "--config", str(config))
    assert done.returncode == 4
    assert "no index yet" in done.stderr
    assert "finalized" not in done.stderr


def test_abstention_cosine_comes_from_the_users_question_not_generated_queries(indexed: Indexed) -> None:
    """A HyDE passage can sit right on top of a chunk; the sufficiency floor must still judge the
    question the user asked."""
    from raggity.core.trace import TraceRecorder  # noqa: PLC0415 - imported where the test needs it
    from raggity.core.types import Query  # noqa: PLC0415 - imported where the test needs it

    session = indexed.session
    question = "What is the capital of Mongolia?"
    passage = "Sourdough bread rises because wild yeast ferments the dough."
    q_vec, p_vec = session.models.embedder.embed([question, passage])
    planned = [Query(question, "question", q_vec), Query(passage, "hyde", p_vec, False)]
    engine = HybridRetriever(
        IndexSnapshot(session.layout), SearchOptions(), plan=lambda _: planned, trace=TraceRecorder()
    )
    found = engine.retrieve(Query(question))
    assert any(Path(c.chunk.source).name == "sourdough.txt" for c in found)
    rows = VectorTableReader(session.layout.table).fetch([c.chunk.id for c in found])
    for c in found:  # each candidate's cosine is the question's, never the passage's
        assert c.dense_cosine == pytest.approx(float(np.dot(q_vec, rows[c.chunk.id].vector)), abs=1e-5)
    assert max(float(np.dot(p_vec, r.vector)) for r in rows.values()) > max(
        c.dense_cosine or 0.0 for c in found
    )
