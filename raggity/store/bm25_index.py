"""The Tantivy BM25 index on disk: chunk id plus searchable text, split into words by the index's
tokenizer ([retrieval] bm25_tokenizer):

- en_stem (default): Tantivy's English tokenizer: lower-cased, stemmed, split at every character
  that is not a letter or digit (`parse_query` is two words) and at no point inside CJK text.
- multilingual: words are split here (multilingual_terms) and handed to Tantivy separated by
  spaces: words of any script whole and unstemmed, code identifiers whole and also by their parts,
  Chinese, Japanese and Korean text as overlapping character pairs, the usual way to search
  languages written without spaces.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import unicodedata
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from raggity.core.errors import NOT_WRITABLE_ERRNOS, os_errno
from raggity.core.stopwords import ENGLISH_STOPWORDS
from raggity.core.types import Chunk

EN_STEM = "en_stem"
MULTILINGUAL = "multilingual"
# The Tantivy tokenizer behind each choice; it is recorded in the index's schema (meta.json), which
# is how a reader knows which one an index was built with.
_TANTIVY_TOKENIZER = {EN_STEM: "en_stem", MULTILINGUAL: "whitespace"}

_WORD = re.compile(r"\w+", re.UNICODE)
_HEAP_BYTES = 64_000_000
# How much further each search for the end of a tie at the k-th hit looks (Bm25Reader.search): each
# search scores every match again, so few rounds pay; at a million chunks, with ties of ~2,000 hits,
# 4x took 24.3 ms a query, 8x 24.7, 16x 20.6 and 32x 30.9 (the last search's heap grows).
_TIE_GROWTH = 16

# Han (with extension A and compatibility ideographs), hiragana, katakana (with the long-vowel mark,
# not the middle dot) and Hangul syllables and jamo: scripts written without spaces between words.
_CJK = (
    "\u1100-\u11ff\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3130-\u318f"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
)
_CJK_OR_WORD = re.compile(rf"[{_CJK}]+|[^\W{_CJK}]+")
_CJK_RUN = re.compile(rf"[{_CJK}]")
# Parts of an ASCII identifier: runs of capitals (HTTP in getHTTPResponse), capitalised or lower-case
# words. Other words are split only at underscores.
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
# Longer "words" are hashes, base64 or minified code: never searched for, and Tantivy refuses terms
# over 65,530 bytes.
_LONGEST_TERM = 100


def multilingual_terms(text: str) -> list[str]:
    """The words of `text` as the multilingual tokenizer indexes them, in order.

    NFKC first, so full-width letters and half-width katakana match their usual forms; then each
    run of CJK characters becomes its overlapping pairs (a lone character stays itself), and each
    other word is kept whole, lower-cased, followed by its parts when it is an identifier like
    parse_query or getHTTPResponse.
    """
    terms: list[str] = []
    for match in _CJK_OR_WORD.finditer(unicodedata.normalize("NFKC", text)):
        word = match.group()
        if _CJK_RUN.match(word):
            terms += [word] if len(word) == 1 else [word[i : i + 2] for i in range(len(word) - 1)]
            continue
        if len(word) > _LONGEST_TERM:
            continue
        terms.append(word.lower())
        parts = _PART.findall(word) if word.isascii() else [part for part in word.split("_") if part]
        if len(parts) > 1:
            terms += [part.lower() for part in parts]
    return terms


def _schema(tokenizer: str) -> Any:
    import tantivy  # noqa: PLC0415 - tantivy loads on first use

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("text", stored=False, tokenizer_name=_TANTIVY_TOKENIZER[tokenizer])
    return builder.build()


def _open(folder: Path, tokenizer: str) -> Any:
    import tantivy  # noqa: PLC0415 - tantivy loads on first use

    folder.mkdir(parents=True, exist_ok=True)
    return tantivy.Index(_schema(tokenizer), path=str(folder), reuse=True)


def built_with(folder: Path) -> str:
    """The tokenizer choice an index was built with, read from its schema (en_stem if unknown)."""
    try:
        fields = json.loads((folder / "meta.json").read_text(encoding="utf-8"))["schema"]
        name = next(f["options"]["indexing"]["tokenizer"] for f in fields if f["name"] == "text")
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return EN_STEM
    return next((choice for choice, used in _TANTIVY_TOKENIZER.items() if used == name), EN_STEM)


def indexed_text(text: str, tokenizer: str) -> str:
    """What is handed to Tantivy for `text`."""
    return text if tokenizer == EN_STEM else " ".join(multilingual_terms(text))


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
    def __init__(self, folder: Path, tokenizer: str = EN_STEM) -> None:
        self._tokenizer = tokenizer
        self._index = _open(folder, tokenizer)
        self._writer = self._index.writer(heap_size=_HEAP_BYTES, num_threads=1)
        self.deleted = False

    def ids(self) -> set[str]:
        self._index.reload()
        return _all_ids(self._index.searcher())

    def documents(self) -> int:
        """How many documents the index holds, counted without reading them."""
        self._index.reload()
        return int(self._index.searcher().num_docs)

    def add(self, chunks: Sequence[Chunk]) -> None:
        import tantivy  # noqa: PLC0415 - tantivy loads on first use

        for chunk in chunks:
            text = indexed_text(chunk.search_text, self._tokenizer)
            self._writer.add_document(tantivy.Document(id=chunk.id, text=text))

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
        self.tokenizer = built_with(folder)

    @property
    def documents(self) -> int:
        """How many documents the index holds (listed or not: Tantivy has no versions)."""
        return 0 if self._searcher is None else int(self._searcher.num_docs)

    def all_ids(self) -> set[str]:
        return set() if self._searcher is None else _all_ids(self._searcher)

    def search(self, text: str, k: int) -> list[tuple[str, float]]:
        """The `k` best chunks, best first; equal scores in chunk id order.

        Tantivy returns equal scores in storage order, which differs between an index updated file
        by file and a clean one of the same files: hits tied with the k-th are fetched too, so that
        the cut at k does not depend on it either. Only those hits' ids are read (a stored document
        each, ~5 us): at a million chunks a passage copied into 2,000 files ties 2,000 hits."""
        terms = lexical_query_text(text)
        if self._index is None or not terms or k <= 0:
            return []
        query = self._query(terms)
        limit = k
        while True:
            # No count of every match: Tantivy can then skip blocks that cannot reach the top.
            hits = self._searcher.search(query, limit, count=False).hits
            if len(hits) < limit or hits[-1][0] < hits[k - 1][0] or limit >= self._searcher.num_docs:
                break
            limit *= _TIE_GROWTH
        kth = hits[min(k, len(hits)) - 1][0] if hits else 0.0
        pairs = [
            (self._searcher.doc(address).get_first("id"), float(score))
            for score, address in hits
            if score >= kth
        ]
        pairs.sort(key=lambda pair: (-pair[1], pair[0]))
        return pairs[:k]

    def _query(self, terms: str) -> Any:
        if self.tokenizer == EN_STEM:
            return self._index.parse_query(terms, ["text"])
        import tantivy  # noqa: PLC0415 - tantivy loads on first use

        schema = self._index.schema
        words = dict.fromkeys(multilingual_terms(terms))
        if not words:
            return tantivy.Query.empty_query()
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "text", word)) for word in words]
        )

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
