"""`rag eval --answers` on a tiny collection written here: the real index and ask pipeline with a scripted
generator for the plumbing, then the real SmolLM2 through the command line."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from raggity.api.answer_eval import AnswerReport, evaluate_answers
from raggity.api.session import Raggity
from raggity.cli.eval_command import answer_table
from raggity.config.loader import load_config
from raggity.evaluation.answer_run import AnswerRecord, CitedSource, GroupScore, sample_cases, summarize_all
from raggity.evaluation.dataset import load_beir
from raggity.testing import ScriptedGenerator
from tests.support import Messages, assert_clean_error, rag, write_config

PARAGRAPHS = {
    "normans": "The Normans",
    "sourdough": "Sourdough starter",
    "jupiter": "Moons of Jupiter",
}
TEXTS = {
    "normans": "The Normans gave their name to Normandy, a region in the north of France. "
    "They descended from Norse raiders who were led by their chieftain Rollo in the 10th century.",
    "sourdough": "A sourdough starter is fed every day with equal weights of rye flour and water. "
    "The bulk rise of the dough takes four to six hours at 24 degrees Celsius.",
    "jupiter": "Galileo Galilei discovered the four large moons of Jupiter in 1610. "
    "Europa, one of these moons, hides a salty ocean below its icy crust.",
}
ANSWERABLE = [
    (
        "a-rollo",
        "Who led the Norse raiders who became the Normans?",
        ["Rollo", "their chieftain Rollo"],
        "normans",
    ),
    ("a-galileo", "In which year did Galileo discover the moons of Jupiter?", ["1610"], "jupiter"),
    ("a-rise", "How long does the bulk rise of sourdough dough take?", ["four to six hours"], "sourdough"),
]
UNANSWERABLE = [
    ("u-king", "Who was the first king crowned by the Normans in Normandy?", "normans"),
    ("u-bake", "At what temperature is the sourdough loaf baked?", "sourdough"),
    ("u-depth", "How deep is the salty ocean of Europa?", "jupiter"),
]
UNRELATED = [
    ("o-capital", "What is the capital of Mongolia?"),  # no id here is in the calibration split
    ("o-vaccine", "How do vaccines train the immune system to fight infections?"),
    ("o-nitrogen", "What is the boiling point of liquid nitrogen?"),
]


GROUP_FIELDS = (
    "group", "n", "answered", "correct", "f1", "declined", "declined_with_closest", "cites_gold",
    "unsupported", "marker_only", "ttft_p50_s", "ttft_p95_s", "total_p50_s", "total_p95_s",
)  # fmt: skip
DETAIL_FIELDS = (
    "id", "group", "question", "answer", "declined", "abstained", "refused", "closest", "citations",
    "cites_gold", "verified", "unsupported", "marker_only", "correct", "f1", "ttft_s", "total_s",
)  # fmt: skip


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def _write_beir(folder: Path, corpus: list[dict[str, Any]], queries: list[dict[str, Any]]) -> None:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(_jsonl(corpus), encoding="utf-8")
    (folder / "queries.jsonl").write_text(_jsonl(queries), encoding="utf-8")
    judged = "".join(f"{q['_id']}\t{corpus[0]['_id']}\t1\n" for q in queries)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + judged, encoding="utf-8")


@pytest.fixture(scope="module")
def collections(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The tiny reading-comprehension collection and a folder of unrelated queries."""
    root = tmp_path_factory.mktemp("answers")
    corpus = [{"_id": key, "title": title, "text": TEXTS[key]} for key, title in PARAGRAPHS.items()]
    questions = [
        {"_id": i, "question": q, "answers": a, "impossible": False, "gold": [p], "para": p}
        for i, q, a, p in ANSWERABLE
    ] + [
        {"_id": i, "question": q, "answers": [], "impossible": True, "gold": [], "para": p}
        for i, q, p in UNANSWERABLE
    ]
    dataset = root / "tiny"
    _write_beir(dataset, corpus, [{"_id": q["_id"], "text": q["question"]} for q in questions[:3]])
    (dataset / "questions.jsonl").write_text(_jsonl(questions), encoding="utf-8")
    other = root / "other"
    _write_beir(
        other,
        [{"_id": "x", "title": "", "text": "unrelated"}],
        [{"_id": i, "text": q} for i, q in UNRELATED],
    )
    return dataset, other


# -- plumbing: the real index and ask pipeline, a scripted generator ----------------------------------

SOURCE = re.compile(r'<source id="(\d+)" file="([^"]*)"')


def _cite(messages: Messages, corpus_id: str) -> str:
    """The [n] of `corpus_id` among the prompt's sources."""
    user = next(m["content"] for m in messages if m["role"] == "user")
    n = next(n for n, source in SOURCE.findall(user) if source == corpus_id)
    return f"[{n}]"


def _reply(messages: Messages) -> str:
    question = next(m["content"] for m in messages if m["role"] == "user").rsplit("Question:", 1)[-1]
    if "Norse raiders" in question:
        return f"The Norse raiders were led by Rollo {_cite(messages, 'normans')}."
    if "Galileo discover" in question:
        # A wrong year that cites the gold paragraph.
        return f"Galileo discovered the moons of Jupiter in 1492 {_cite(messages, 'jupiter')}."
    if "bulk rise" in question:
        return "The bulk rise takes four to six hours."  # right, but without a citation
    return "Nobody knows."


class Recorder:
    def __init__(self, events: list[str]) -> None:
        self.total = 0
        self.records: list[AnswerRecord] = []
        self._events = events

    def begin(self, total: int) -> None:
        self.total = total
        self._events.append("first question")

    def answered(self, record: AnswerRecord) -> None:
        self.records.append(record)


def _scripted_run(
    collections: tuple[Path, Path], tmp_path: Path
) -> tuple[AnswerReport, Recorder, ScriptedGenerator, list[str]]:
    dataset, other = collections
    generator = ScriptedGenerator(_reply)
    events: list[str] = []
    recorder = Recorder(events)
    config = load_config(write_config(tmp_path))
    report = evaluate_answers(
        dataset,
        config,
        per_group=3,
        seed=5,
        abstain_queries=other,
        answers=recorder,
        open_session=lambda local: Raggity(local, generator=generator),
    )
    return report, recorder, generator, events


def test_scripted_answers_are_scored_through_the_real_pipeline(
    collections: tuple[Path, Path], tmp_path: Path
) -> None:
    report, recorder, generator, events = _scripted_run(collections, tmp_path)
    assert events == ["first question"]
    assert (report.dataset, report.documents, report.model, report.seed, report.per_group) == (
        "tiny",
        3,
        "scripted-generator",
        5,
        3,
    )
    by_id = {r.id: r for r in recorder.records}
    assert recorder.total == 9
    assert len(by_id) == 9

    rollo, galileo, rise = by_id["a-rollo"], by_id["a-galileo"], by_id["a-rise"]
    assert (rollo.correct, rollo.cites_gold, rollo.verified) == (True, True, True)
    assert rollo.f1 == pytest.approx(2 / 7)  # "norse raiders were led by rollo" vs "rollo": P 1/6, R 1
    assert [(c.source, c.supported) for c in rollo.citations] == [("normans", True)]
    # A year the source does not hold is no support: no sentence has a source, so it is declined.
    assert (galileo.correct, galileo.cites_gold, galileo.verified) == (False, False, False)
    assert (galileo.declined, galileo.unsupported, galileo.closest > 0) == (True, True, True)
    assert not rollo.unsupported
    # Uncited by the model, the sentence gets the source that supports it.
    assert (rise.correct, rise.cites_gold, rise.verified) == (True, True, True)
    assert rise.f1 == pytest.approx(8 / 11)  # "bulk rise takes four to six hours": P 4/7, R 4/4
    # The unrelated questions are declined by the pipeline's own abstention, before any generation.
    for key, _ in UNRELATED:
        assert (by_id[key].declined, by_id[key].abstained, by_id[key].ttft_s) == (True, True, None)
        assert by_id[key].correct is None
        assert by_id[key].closest > 0  # the decline shows what it read
    assert rollo.closest == 0  # an answer shows its sources, not closest passages
    asked = [m[-1]["content"] for m in generator.calls]
    assert not any(question in prompt for prompt in asked for _, question in UNRELATED)
    assert all(by_id[key].ttft_s is not None for key, *_ in ANSWERABLE)

    answerable, unanswerable, unrelated = report.groups
    assert (answerable.group, answerable.n, answerable.correct, answerable.declined) == (
        "answerable",
        3,
        2 / 3,
        1 / 3,
    )
    assert (answerable.cites_gold, answerable.unsupported, answerable.marker_only) == (2 / 3, 1 / 3, 0.0)
    assert (unanswerable.group, unanswerable.n, unanswerable.correct, unanswerable.f1) == (
        "unanswerable",
        3,
        None,
        None,
    )
    assert (unrelated.group, unrelated.n, unrelated.declined, unrelated.answered) == (
        "out-of-corpus",
        3,
        1.0,
        0,
    )
    assert unrelated.declined_with_closest == 1.0
    assert answerable.declined_with_closest == 1.0
    assert report.groups == summarize_all(recorder.records)


def test_the_same_seed_asks_the_same_questions_in_the_same_order(
    collections: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, other = collections
    first, second = (_scripted_run(collections, tmp_path / name) for name in ("one", "two"))
    order = [r.id for r in first[1].records]
    expected = sample_cases(load_beir(dataset).questions, load_beir(other).queries, 3, 5)
    assert order == [c.id for c in expected]
    assert [r.id for r in second[1].records] == order
    assert [(r.answer, r.declined, r.correct) for r in second[1].records] == [
        (r.answer, r.declined, r.correct) for r in first[1].records
    ]


def test_the_table_renders_text_as_text() -> None:
    answerable = GroupScore("answerable", 4, 3, 0.5, 0.4321, 0.25, 0.0, 0.5, 1 / 3, 0.0, 1.234, 2.5, 3.0, 4.0)
    unrelated = GroupScore("out-of-corpus", 2, 0, None, None, 1.0, 1.0, None, 0.5, None, None, None, 0.1, 0.2)
    report = AnswerReport("[red]x[/red]", "model[bold]", 0, 4, 3, 3, 1.0, (answerable, unrelated))
    console = Console(record=True, width=80, color_system=None)
    console.print(answer_table(report))
    rows = {}
    for line in console.export_text().splitlines():
        cells = [cell.strip() for cell in re.split(r"[│┃|]", line)[1:-1]]
        if len(cells) == 3:
            rows[cells[0]] = cells[1:]
    assert rows == {
        "": ["answerable", "out-of-corpus"],
        "questions": ["4", "2"],
        "correct": ["50.0%", "-"],
        "token F1": ["0.432", "-"],
        "declined": ["25.0%", "100.0%"],
        "declined, closest shown": ["0.0%", "100.0%"],
        "cites a gold paragraph": ["50.0%", "-"],
        "declined, reply had no source": ["33.3%", "50.0%"],
        "marker-only": ["0.0%", "-"],
        "first token p50 / p95 s": ["1.23 / 2.50", "- / -"],
        "total p50 / p95 s": ["3.00 / 4.00", "0.10 / 0.20"],
    }


# -- the command line ------------------------------------------------------------------------------------


def test_answers_options_need_answers(collections: tuple[Path, Path], tmp_path: Path) -> None:
    result = rag("eval", str(collections[0]), "--per-group", "3", cwd=tmp_path)
    assert result.returncode == 2
    assert "--per-group" in result.stderr
    assert "only with --answers" in result.stderr


def test_answers_without_questions_is_a_clean_error(collections: tuple[Path, Path], tmp_path: Path) -> None:
    write_config(tmp_path)
    result = rag("eval", str(collections[1]), "--answers", cwd=tmp_path)
    assert result.returncode == 2
    line = assert_clean_error(result.stderr)
    assert "other/questions.jsonl is missing or empty" in line


def test_an_unknown_model_fails_before_indexing(collections: tuple[Path, Path], tmp_path: Path) -> None:
    write_config(tmp_path)
    index = tmp_path / "index"
    result = rag(
        "eval",
        str(collections[0]),
        "--answers",
        "--model",
        "no-such-model",
        "--index",
        str(index),
        cwd=tmp_path,
    )
    assert result.returncode == 3
    assert "'no-such-model' is neither packaged nor pulled" in assert_clean_error(result.stderr)
    assert not index.exists()


def test_an_unwritable_details_file_is_a_clean_error(collections: tuple[Path, Path], tmp_path: Path) -> None:
    write_config(tmp_path)
    details = tmp_path / "missing-folder" / "details.jsonl"
    result = rag("eval", str(collections[0]), "--answers", "--details", str(details), cwd=tmp_path)
    assert result.returncode == 1
    assert f"cannot write {details}" in assert_clean_error(result.stderr)


def test_real_smollm_answers_from_the_command_line(collections: tuple[Path, Path], tmp_path: Path) -> None:
    dataset, other = collections
    config = write_config(tmp_path, generation={"threads": 1})
    details = tmp_path / "details.jsonl"
    args = ("--per-group", "2", "--seed", "1", "--details", str(details), "--json", "-c", str(config))
    result = rag("eval", str(dataset), "--answers", "--abstain-queries", str(other), *args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["model"].startswith("smollm2-135m-instruct:")
    assert (report["dataset"], report["documents"], report["seed"], report["per_group"]) == ("tiny", 3, 1, 2)
    assert [g["group"] for g in report["groups"]] == ["answerable", "unanswerable", "out-of-corpus"]
    assert [g["n"] for g in report["groups"]] == [2, 2, 2]
    # The documented --json fields (docs/evaluation.md): renaming one breaks people's scripts.
    assert set(report) == {
        "dataset",
        "model",
        "seed",
        "per_group",
        "documents",
        "chunks",
        "index_seconds",
        "groups",
    }
    assert set(report["groups"][0]) == set(GROUP_FIELDS)

    lines = [json.loads(line) for line in details.read_text(encoding="utf-8").splitlines()]
    expected = sample_cases(load_beir(dataset).questions, load_beir(other).queries, 2, 1)
    assert [(line["id"], line["group"]) for line in lines] == [(c.id, c.group) for c in expected]
    assert set(lines[0]) == set(DETAIL_FIELDS)
    for line in lines:
        assert line["declined"] == (line["abstained"] or line["refused"])
        assert (line["correct"] is None) == (line["group"] != "answerable")
        if line["abstained"]:
            assert line["ttft_s"] is None
    # The report is the summary of exactly these answers.
    records = [
        AnswerRecord(**{**line, "citations": tuple(CitedSource(**c) for c in line["citations"])})
        for line in lines
    ]
    assert [asdict(g) for g in summarize_all(records)] == report["groups"]
    # "What is the capital of Mongolia?"-like questions are far from every paragraph: the pipeline abstains.
    assert report["groups"][2]["declined"] == 1.0
