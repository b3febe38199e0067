"""Reader for evaluation collections in the BEIR layout (corpus, queries, qrels, optional questions)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from raggity.core.errors import DatasetError, os_reason


@dataclass(frozen=True)
class CorpusDoc:
    """One document of the collection."""

    id: str
    title: str
    text: str


@dataclass(frozen=True)
class EvalQuery:
    """One query that has relevance judgements."""

    id: str
    text: str


@dataclass(frozen=True)
class SquadQuestion:
    """A reading-comprehension question; `gold` lists the corpus ids that answer it, `para` its source."""

    id: str
    question: str
    answers: tuple[str, ...]
    impossible: bool
    gold: tuple[str, ...]
    para: str


@dataclass(frozen=True)
class BeirDataset:
    """A loaded collection; `queries` holds only the queries that appear in `qrels`."""

    name: str
    corpus: tuple[CorpusDoc, ...]
    queries: tuple[EvalQuery, ...]
    qrels: Mapping[str, Mapping[str, int]]
    questions: tuple[SquadQuestion, ...]


class _Source:
    """A file of the dataset, named as `<folder>/<relative path>` in error messages."""

    def __init__(self, folder: Path, relative: str, split: str) -> None:
        self.path = folder / relative
        self.label = f"{folder.resolve().name}/{relative}"
        self.split = split

    def require(self) -> None:
        if self.path.is_file():
            return
        # A wrong --split is the likeliest cause when the qrels folder exists, so name the real ones.
        splits = (
            sorted(path.stem for path in self.path.parent.glob("*.tsv")) if self.path.suffix == ".tsv" else []
        )
        if splits:
            raise DatasetError(f"missing {self.label}: available splits are {', '.join(splits)}")
        raise DatasetError(
            f"missing {self.label}: expected the BEIR layout "
            f"(corpus.jsonl, queries.jsonl, qrels/{self.split}.tsv)"
        )

    def error(self, lineno: int, problem: str) -> DatasetError:
        return DatasetError(f"{self.label}:{lineno}: {problem}")

    def lines(self) -> Iterator[tuple[int, str]]:
        """Yield (1-based line number, text) for every non-blank line."""
        try:
            with self.path.open("rb") as handle:
                for lineno, raw in enumerate(handle, start=1):
                    try:
                        line = raw.decode("utf-8")
                    except UnicodeDecodeError:
                        raise self.error(lineno, "not valid UTF-8") from None
                    # Files saved by some Windows editors start with a byte-order mark.
                    if lineno == 1:
                        line = line.removeprefix("\ufeff")
                    if line.strip():
                        yield lineno, line.rstrip("\r\n")
        except OSError as exc:
            raise DatasetError(f"cannot read {self.label}: {os_reason(exc)}") from None

    def objects(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """Yield (line number, object) for every JSON line."""
        for lineno, line in self.lines():
            try:
                value = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                raise self.error(lineno, "not valid JSON") from None
            if not isinstance(value, dict):
                raise self.error(lineno, "expected a JSON object")
            yield lineno, value


def _ident(source: _Source, lineno: int, obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    # BEIR files sometimes write numeric ids as JSON numbers; bool is an int subclass but never an id.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value:
        return value
    raise source.error(lineno, f'"{key}" must be a non-empty string or an integer')


def _text(source: _Source, lineno: int, obj: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = obj.get(key, default)
    if not isinstance(value, str):
        raise source.error(lineno, f'"{key}" must be a string')
    return value


def _strings(source: _Source, lineno: int, obj: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = obj.get(key)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise source.error(lineno, f'"{key}" must be a list of strings')
    return tuple(value)


def _read_corpus(source: _Source) -> tuple[CorpusDoc, ...]:
    docs: dict[str, CorpusDoc] = {}
    for lineno, obj in source.objects():
        doc_id = _ident(source, lineno, obj, "_id")
        if doc_id in docs:
            raise source.error(lineno, f"duplicate _id {doc_id!r}")
        # Some BEIR corpora have no titles at all, so a missing title is an empty one.
        title = _text(source, lineno, obj, "title", default="")
        docs[doc_id] = CorpusDoc(id=doc_id, title=title, text=_text(source, lineno, obj, "text"))
    return tuple(docs.values())


def _read_queries(source: _Source) -> dict[str, EvalQuery]:
    queries: dict[str, EvalQuery] = {}
    for lineno, obj in source.objects():
        query_id = _ident(source, lineno, obj, "_id")
        if query_id in queries:
            raise source.error(lineno, f"duplicate _id {query_id!r}")
        queries[query_id] = EvalQuery(id=query_id, text=_text(source, lineno, obj, "text"))
    return queries


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _read_qrels(
    source: _Source, query_ids: Mapping[str, object], doc_ids: set[str]
) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    first = True
    for lineno, line in source.lines():
        fields = [field.strip() for field in line.split("\t")]
        # The header is optional in practice: a first line whose score is a number is data.
        if first and not (len(fields) == 3 and _is_int(fields[2])):
            first = False
            continue
        first = False
        if len(fields) != 3:
            raise source.error(
                lineno, f"expected query-id<TAB>corpus-id<TAB>score, got {len(fields)} field(s)"
            )
        query_id, doc_id, score = fields
        if not _is_int(score):
            raise source.error(lineno, f"score {score!r} is not an integer")
        # A judgement that points nowhere means the files come from different collections,
        # which would silently cap every score; better to stop here.
        if query_id not in query_ids:
            raise source.error(lineno, f"query {query_id!r} is not in queries.jsonl")
        if doc_id not in doc_ids:
            raise source.error(lineno, f"document {doc_id!r} is not in corpus.jsonl")
        judged = qrels.setdefault(query_id, {})
        if doc_id in judged:
            raise source.error(lineno, f"query {query_id!r} judges document {doc_id!r} twice")
        judged[doc_id] = int(score)
    return qrels


def _read_questions(source: _Source, doc_ids: set[str]) -> tuple[SquadQuestion, ...]:
    questions: dict[str, SquadQuestion] = {}
    for lineno, obj in source.objects():
        question_id = _ident(source, lineno, obj, "_id")
        if question_id in questions:
            raise source.error(lineno, f"duplicate _id {question_id!r}")
        impossible = obj.get("impossible")
        if not isinstance(impossible, bool):
            raise source.error(lineno, '"impossible" must be true or false')
        gold = _strings(source, lineno, obj, "gold")
        para = _ident(source, lineno, obj, "para")
        for doc_id in (*gold, para):
            if doc_id not in doc_ids:
                raise source.error(lineno, f"document {doc_id!r} is not in corpus.jsonl")
        questions[question_id] = SquadQuestion(
            id=question_id,
            question=_text(source, lineno, obj, "question"),
            answers=_strings(source, lineno, obj, "answers"),
            impossible=impossible,
            gold=gold,
            para=para,
        )
    return tuple(questions.values())


def load_beir(folder: Path, split: str = "test") -> BeirDataset:
    """Read `folder` (corpus.jsonl, queries.jsonl, qrels/<split>.tsv, optional questions.jsonl).

    Raises DatasetError naming the file and line of the first problem.
    """
    if not folder.is_dir():
        raise DatasetError(f"missing dataset folder {folder}")
    corpus_src = _Source(folder, "corpus.jsonl", split)
    queries_src = _Source(folder, "queries.jsonl", split)
    qrels_src = _Source(folder, f"qrels/{split}.tsv", split)
    # Check every required file before reading any, so a wrong folder fails at once, not after
    # parsing a large corpus.
    for source in (corpus_src, queries_src, qrels_src):
        source.require()
    corpus = _read_corpus(corpus_src)
    doc_ids = {doc.id for doc in corpus}
    all_queries = _read_queries(queries_src)
    qrels = _read_qrels(qrels_src, all_queries, doc_ids)
    questions_src = _Source(folder, "questions.jsonl", split)
    questions = _read_questions(questions_src, doc_ids) if questions_src.path.is_file() else ()
    return BeirDataset(
        name=folder.resolve().name,
        corpus=corpus,
        # queries.jsonl may hold queries of every split; keep only the judged ones, in file order.
        queries=tuple(query for query_id, query in all_queries.items() if query_id in qrels),
        qrels=MappingProxyType({qid: MappingProxyType(judged) for qid, judged in qrels.items()}),
        questions=questions,
    )
