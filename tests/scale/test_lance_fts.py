"""Lance's native full-text index and Tantivy answer one BM25 contract: the same queries over the same
chunks give the same top results, whether the Lance table is local or on the S3 server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import lance
import pyarrow as pa
import pytest

from raggity.core.types import Chunk, Location
from raggity.store.bm25_index import Bm25Reader, Bm25Writer
from raggity.store.lance_fts import LanceFtsReader, create_fts_index
from tests.scale.conftest import S3Server

DOCS = Path(__file__).resolve().parents[2] / "docs"
QUERIES = [
    "How do I rebuild the index after changing the embedding model?",
    "citations line ranges for PDF pages",
    "what does rag status print",
    "MCP server tools for coding agents",
    "reranking with a cross-encoder",
    "ignore files and hidden folders during ingest",
    "reciprocal rank fusion of BM25 and dense lists",
    "abstain when the answer is not in the documents",
    "entity graph extraction",
    "config file keys and their defaults",
    "watching a folder for changes",
    "nDCG@10 on SciFact",
    "AND OR NOT (punctuation!) and the",
]


def _chunks() -> list[Chunk]:
    """Real prose: every paragraph of the project's own docs, one chunk each, with its heading trail."""
    chunks: list[Chunk] = []
    for path in sorted(DOCS.glob("*.md")):
        heading = ""
        for n, block in enumerate(re.split(r"\n\s*\n", path.read_text(encoding="utf-8"))):
            text = block.strip()
            if text.startswith("#"):
                heading = text.lstrip("#").strip().splitlines()[0]
                continue
            if text:
                chunks.append(
                    Chunk(f"{path.stem}-{n:04d}", str(path), text, heading, Location(1, 1), "", n, 1)
                )
    return chunks


def _table(chunks: list[Chunk]) -> pa.Table:
    return pa.table(
        {"id": [c.id for c in chunks], "search_text": [c.search_text for c in chunks]},
        schema=pa.schema([("id", pa.string()), ("search_text", pa.string())]),
    )


def _lance(uri: str, chunks: list[Chunk], storage_options: dict[str, str] | None = None) -> Any:

    half = len(chunks) // 2
    options = storage_options or {}
    lance.write_dataset(_table(chunks[:half]), uri, storage_options=options)
    dataset = lance.write_dataset(_table(chunks[half:]), uri, mode="append", storage_options=options)
    create_fts_index(dataset)
    return lance.dataset(uri, storage_options=options)


@pytest.fixture(scope="module")
def chunks() -> list[Chunk]:
    found = _chunks()
    assert len(found) > 300  # enough documents for BM25 statistics to matter
    return found


@pytest.fixture(scope="module")
def tantivy(chunks: list[Chunk], tmp_path_factory: pytest.TempPathFactory) -> Bm25Reader:
    folder = tmp_path_factory.mktemp("tantivy")
    writer = Bm25Writer(folder)
    half = len(chunks) // 2
    writer.add(chunks[:half])
    writer.commit()
    writer.add(chunks[half:])
    writer.commit()
    writer.close()
    return Bm25Reader(folder)


def _agree(expected: list[tuple[str, float]], actual: list[tuple[str, float]]) -> None:
    """The same documents in the same order, up to ties: scores may differ by the length
    quantisation Tantivy applies (fieldnorms), which can swap documents whose scores are within it."""
    assert len(actual) == len(expected)
    assert expected, "every query must match something"
    assert actual[0][0] == expected[0][0] or abs(actual[0][1] - actual[1][1]) < 0.05 * actual[0][1]
    top = {cid for cid, _ in expected[:10]}
    assert len(top & {cid for cid, _ in actual[:10]}) >= 8
    # Same BM25 (k1 1.2, b 0.75, same IDF): a document both return scores within a few percent (5% at
    # most measured on the docs: Tantivy's one-byte length codes are coarse for long paragraphs).
    theirs = dict(actual)
    for cid, score in expected:
        if cid in theirs:
            assert theirs[cid] == pytest.approx(score, rel=0.1)


def test_lance_fts_agrees_with_tantivy_on_a_local_table(
    chunks: list[Chunk], tantivy: Bm25Reader, tmp_path: Path
) -> None:
    lance_reader = LanceFtsReader(_lance(str(tmp_path / "chunks.lance"), chunks))
    assert lance_reader.all_ids() == tantivy.all_ids() == {c.id for c in chunks}
    for query in QUERIES:
        _agree(tantivy.search(query, 20), lance_reader.search(query, 20))


def test_lance_fts_on_s3_agrees_with_tantivy_and_is_read_by_a_fresh_connection(
    chunks: list[Chunk], tantivy: Bm25Reader, s3: S3Server
) -> None:
    uri = f"{s3.prefix()}/lancedb/chunks.lance"
    _lance(uri, chunks, s3.storage_options)
    lance_reader = LanceFtsReader.open(uri, s3.storage_options)
    for query in QUERIES:
        _agree(tantivy.search(query, 20), lance_reader.search(query, 20))


def test_empty_and_stopword_only_queries_behave_like_tantivy(
    chunks: list[Chunk], tantivy: Bm25Reader, tmp_path: Path
) -> None:
    lance_reader = LanceFtsReader(_lance(str(tmp_path / "chunks.lance"), chunks))
    assert lance_reader.search("", 5) == tantivy.search("", 5) == []
    assert lance_reader.search("...!?", 5) == tantivy.search("...!?", 5) == []
    assert lance_reader.search("retrieval", 0) == []
    assert [c for c, _ in lance_reader.search("the", 5)] != []
    assert LanceFtsReader(None).search("retrieval", 5) == []
    assert LanceFtsReader(None).all_ids() == set()
