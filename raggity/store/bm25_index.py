"""The Tantivy BM25 index on disk: chunk id plus searchable text with English stemming."""

from __future__ import annotations

import re
import shutil
import tempfile
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from raggity.core.errors import NOT_WRITABLE_ERRNOS, os_errno
from raggity.core.stopwords import ENGLISH_STOPWORDS
from raggity.core.types import Chunk

_WORD = re.compile(r"\w+", re.UNICODE)
_HEAP_BYTES = 64_000_000


def _schema() -> Any:
    import tantivy  # noqa: PLC0415 - tantivy loads on first use

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("text", stored=False, tokenizer_name="en_stem")
    return builder.build()


def _open(folder: Path) -> Any:
    import tantivy  # noqa: PLC0415 - tantivy loads on first use

    folder.mkdir(parents=True, exist_ok=True)
    return tantivy.Index(_schema(), path=str(folder), reuse=True)


def _all_ids(searcher: Any) -> set[str]:
    import tantivy  # noqa: PLC0415 - tantivy loads on first use

    hits = searcher.search(tantivy.Query.all_query(), max(searcher.num_docs, 1)).hits
    return {searcher.doc(address)["id"][0] for _, address in hits}


def lexical_query_text(text: str) -> str:
    """Reduces free text to plain lowercase terms without stopwords, so that user punctuation or words
    like AND/NOT are never parsed as query syntax (tantivy's lenient parser drops terms after a syntax
    error). A query of nothing but stopwords keeps them all.

    The index keeps function words, but query terms like "the" would give every chunk a BM25 rank,
    and rank fusion would count those ranks as evidence."""
    words = [word.lower() for word in _WORD.findall(text)]
    content = [word for word in words if word not in ENGLISH_STOPWORDS]
    return " ".join(content or words)


class Bm25Writer:
    def __init__(self, folder: Path) -> None:
        self._index = _open(folder)
        self._writer = self._index.writer(heap_size=_HEAP_BYTES, num_threads=1)
        self.deleted = False

    def ids(self) -> set[str]:
        self._index.reload()
        return _all_ids(self._index.searcher())

    def add(self, chunks: Sequence[Chunk]) -> None:
        import tantivy  # noqa: PLC0415 - tantivy loads on first use

        for chunk in chunks:
            self._writer.add_document(tantivy.Document(id=chunk.id, text=chunk.search_text))

    def delete(self, ids: Iterable[str]) -> None:
        for chunk_id in ids:
            self._writer.delete_documents_by_term("id", chunk_id)
            self.deleted = True

    def replace_all(self, batches: Iterable[Sequence[Chunk]]) -> None:
        """Re-indexes exactly these chunks in one commit (a kill before it leaves the old index).

        Tantivy keeps a deleted document in its segment, and in the BM25 statistics (document count,
        term frequencies, average length), until a merge drops it; tantivy-py cannot ask for a merge.
        Writing the live chunks afresh makes the scores equal those of a clean ingest of the same files.
        """
        self._writer.delete_all_documents()
        for chunks in batches:
            self.add(chunks)
        self._writer.commit()
        self.deleted = False

    def commit(self) -> None:
        self._writer.commit()

    def close(self) -> None:
        self._writer.garbage_collect_files()
        self._writer.wait_merging_threads()


class Bm25Reader:
    def __init__(self, folder: Path) -> None:
        self._index: Any = self._open(folder) if (folder / "meta.json").exists() else None
        self._searcher: Any = self._index.searcher() if self._index is not None else None

    def all_ids(self) -> set[str]:
        return set() if self._searcher is None else _all_ids(self._searcher)

    def search(self, text: str, k: int) -> list[tuple[str, float]]:
        terms = lexical_query_text(text)
        if self._index is None or not terms or k <= 0:
            return []
        query = self._index.parse_query(terms, ["text"])
        hits = self._searcher.search(query, k).hits
        return [(self._searcher.doc(address)["id"][0], float(score)) for score, address in hits]

    def _open(self, folder: Path) -> Any:
        """Opens the index for searching, also on read-only media.

        Opening a Tantivy reader creates (or opens for writing) its `.tantivy-meta.lock`, which fails
        on a read-only folder. There, the index files are linked from a private temporary folder, kept
        as long as this reader, where the lock can be made: nothing is copied, nothing is written next
        to the index.
        """
        import tantivy  # noqa: PLC0415 - tantivy loads on first use

        try:
            return tantivy.Index.open(str(folder))
        except ValueError as exc:
            if os_errno(exc) not in NOT_WRITABLE_ERRNOS:
                raise
        shadow = Path(tempfile.mkdtemp(prefix="raggity-bm25-"))
        weakref.finalize(self, shutil.rmtree, shadow, ignore_errors=True)
        for entry in folder.iterdir():
            if not entry.name.endswith(".lock"):
                (shadow / entry.name).symlink_to(entry.resolve())
        return tantivy.Index.open(str(shadow))
