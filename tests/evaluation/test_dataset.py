"""BEIR layout reader: small datasets written on the fly, good and broken, plus the shipped collections."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raggity.core.errors import DatasetError
from raggity.evaluation.dataset import BeirDataset, CorpusDoc, EvalQuery, SquadQuestion, load_beir

SHARED = Path("/work/shared/eval")

CORPUS: list[dict[str, object]] = [
    {"_id": "d1", "title": "Cats", "text": "Cats purr."},
    {"_id": 2, "title": "Dogs", "text": "Dogs bark."},  # numeric id: coerced to "2"
    {"_id": "d3", "text": "No title here."},  # BEIR corpora may omit titles
]
QUERIES: list[dict[str, object]] = [
    {"_id": "q1", "text": "what purrs"},
    {"_id": 7, "text": "what barks"},
    {"_id": "q-train", "text": "judged only in another split"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\n7\t2\t2\n7\td3\t0\n"
QUESTIONS: list[dict[str, object]] = [
    {
        "_id": "s1",
        "question": "Who purrs?",
        "answers": ["Cats"],
        "impossible": False,
        "gold": ["d1"],
        "para": "d1",
    },
    {"_id": "s2", "question": "Who meows?", "answers": [], "impossible": True, "gold": [], "para": "d1"},
]


def jsonl(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def write(folder: Path, replace: dict[str, str] | None = None, *, questions: bool = False) -> Path:
    """Write a small valid dataset, with `replace` mapping a relative path to different contents."""
    files = {"corpus.jsonl": jsonl(CORPUS), "queries.jsonl": jsonl(QUERIES), "qrels/test.tsv": QRELS}
    if questions:
        files["questions.jsonl"] = jsonl(QUESTIONS)
    files.update(replace or {})
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def error_of(folder: Path, split: str = "test") -> str:
    with pytest.raises(DatasetError) as info:
        load_beir(folder, split)
    assert info.value.exit_code == 2
    return str(info.value)


def test_loads_small_dataset(tmp_path: Path) -> None:
    data = load_beir(write(tmp_path / "mini"))
    assert data == BeirDataset(
        name="mini",
        corpus=(
            CorpusDoc(id="d1", title="Cats", text="Cats purr."),
            CorpusDoc(id="2", title="Dogs", text="Dogs bark."),
            CorpusDoc(id="d3", title="", text="No title here."),
        ),
        # q-train has no judgements in the test split, so it is left out.
        queries=(EvalQuery(id="q1", text="what purrs"), EvalQuery(id="7", text="what barks")),
        qrels={"q1": {"d1": 1}, "7": {"2": 2, "d3": 0}},
        questions=(),
    )


def test_qrels_are_read_only(tmp_path: Path) -> None:
    data = load_beir(write(tmp_path / "mini"))
    with pytest.raises(TypeError):
        data.qrels["q1"]["d1"] = 5  # type: ignore[index]


def test_loads_questions(tmp_path: Path) -> None:
    data = load_beir(write(tmp_path / "mini", questions=True))
    assert data.questions == (
        SquadQuestion(
            id="s1", question="Who purrs?", answers=("Cats",), impossible=False, gold=("d1",), para="d1"
        ),
        SquadQuestion(id="s2", question="Who meows?", answers=(), impossible=True, gold=(), para="d1"),
    )


def test_other_split_and_tolerated_formatting(tmp_path: Path) -> None:
    folder = write(tmp_path / "mini")
    # No header, CRLF line ends and blank lines are all accepted.
    (folder / "qrels" / "dev.tsv").write_text("q-train\td1\t1\r\n\r\n", encoding="utf-8")
    data = load_beir(folder, "dev")
    assert data.queries == (EvalQuery(id="q-train", text="judged only in another split"),)
    assert data.qrels == {"q-train": {"d1": 1}}


def test_missing_folder(tmp_path: Path) -> None:
    assert "missing dataset folder" in error_of(tmp_path / "nowhere")


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"])
def test_missing_required_file(tmp_path: Path, name: str) -> None:
    folder = write(tmp_path / "mini")
    (folder / name).unlink()
    if name.startswith("qrels"):
        (folder / "qrels").rmdir()
    assert error_of(folder) == (
        f"missing mini/{name}: expected the BEIR layout (corpus.jsonl, queries.jsonl, qrels/test.tsv)"
    )


def test_missing_split_names_the_available_ones(tmp_path: Path) -> None:
    assert (
        error_of(write(tmp_path / "mini"), "dev") == "missing mini/qrels/dev.tsv: available splits are test"
    )


@pytest.mark.parametrize(
    ("replace", "message"),
    [
        ({"corpus.jsonl": jsonl(CORPUS[:1]) + "{not json\n"}, "mini/corpus.jsonl:2: not valid JSON"),
        (
            {"corpus.jsonl": "\n" + jsonl(CORPUS[:1]) + "[1, 2]\n"},
            "mini/corpus.jsonl:3: expected a JSON object",
        ),
        (
            {"corpus.jsonl": jsonl([{"title": "t", "text": "x"}])},
            'mini/corpus.jsonl:1: "_id" must be a non-empty',
        ),
        (
            {"corpus.jsonl": jsonl([{"_id": True, "text": "x"}])},
            'mini/corpus.jsonl:1: "_id" must be a non-empty',
        ),
        ({"corpus.jsonl": jsonl([{"_id": "a", "text": 3}])}, 'mini/corpus.jsonl:1: "text" must be a string'),
        ({"corpus.jsonl": jsonl([CORPUS[0], CORPUS[0]])}, "mini/corpus.jsonl:2: duplicate _id 'd1'"),
        ({"queries.jsonl": jsonl([{"_id": "q1"}])}, 'mini/queries.jsonl:1: "text" must be a string'),
        ({"queries.jsonl": jsonl([QUERIES[0], QUERIES[0]])}, "mini/queries.jsonl:2: duplicate _id 'q1'"),
        (
            {"qrels/test.tsv": QRELS + "q1\td2\n"},
            "mini/qrels/test.tsv:5: expected query-id<TAB>corpus-id<TAB>score",
        ),
        (
            {"qrels/test.tsv": QRELS + "q1\td3\thigh\n"},
            "mini/qrels/test.tsv:5: score 'high' is not an integer",
        ),
        (
            {"qrels/test.tsv": QRELS + "q9\td1\t1\n"},
            "mini/qrels/test.tsv:5: query 'q9' is not in queries.jsonl",
        ),
        (
            {"qrels/test.tsv": QRELS + "q1\tdX\t1\n"},
            "mini/qrels/test.tsv:5: document 'dX' is not in corpus.jsonl",
        ),
        (
            {"qrels/test.tsv": QRELS + "q1\td1\t0\n"},
            "mini/qrels/test.tsv:5: query 'q1' judges document 'd1' twice",
        ),
        (
            {"questions.jsonl": jsonl([{**QUESTIONS[0], "impossible": "no"}])},
            'mini/questions.jsonl:1: "impossible" must be true or false',
        ),
        (
            {"questions.jsonl": jsonl([QUESTIONS[0], {**QUESTIONS[1], "answers": "Cats"}])},
            'mini/questions.jsonl:2: "answers" must be a list of strings',
        ),
        (
            {"questions.jsonl": jsonl([{**QUESTIONS[0], "para": "dX"}])},
            "mini/questions.jsonl:1: document 'dX' is not in corpus.jsonl",
        ),
    ],
)
def test_broken_lines_name_file_and_line(tmp_path: Path, replace: dict[str, str], message: str) -> None:
    assert error_of(write(tmp_path / "mini", replace)).startswith(message)


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    folder = write(tmp_path / "mini")
    (folder / "queries.jsonl").write_bytes(jsonl(QUERIES[:1]).encode() + b'{"_id": "q2", "text": "\xff"}\n')
    assert error_of(folder) == "mini/queries.jsonl:2: not valid UTF-8"


def test_error_is_one_line(tmp_path: Path) -> None:
    assert "\n" not in error_of(write(tmp_path / "mini", {"corpus.jsonl": "{\n"}))


def test_real_scifact_matches_readme_counts() -> None:
    data = load_beir(SHARED / "scifact")
    assert data.name == "scifact"
    assert len(data.corpus) == 5183
    assert len(data.queries) == 300
    assert sum(len(judged) for judged in data.qrels.values()) == 339
    assert data.questions == ()


def test_real_squad2_matches_readme_counts() -> None:
    data = load_beir(SHARED / "squad2-dev")
    assert len(data.corpus) == 646
    assert len(data.questions) == 6078
    answerable = [question for question in data.questions if not question.impossible]
    assert len(answerable) == 2910
    assert len(data.questions) - len(answerable) == 3168
    # Only answerable questions are judged, so they are the queries.
    assert len(data.queries) == 2910
