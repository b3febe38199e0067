"""Query transforms: plumbing with a scripted generator, then the real SmolLM2 GGUF end to end."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.core.protocols import Vectors
from raggity.core.trace import TraceRecorder
from raggity.core.types import Candidate, Chunk, Location, Query
from raggity.pipeline.search.hybrid import QueryPlan, query_lists_stage
from raggity.pipeline.search.query_plan import (
    DECOMPOSE_NOTE,
    TransformOptions,
    merge_by_chunk,
    resolve_options,
)
from raggity.pipeline.search.request import request_retriever
from raggity.pipeline.search.transforms import (
    MAX_SUB_QUESTIONS,
    Transforms,
    TransformSettings,
    parse_questions,
)
from raggity.store.cache_store import CacheStore
from raggity.testing import RecordingGenerator, ScriptedGenerator
from tests.isolation import isolated_state
from tests.support import write_config

QUESTION = "How much disk space does the frobnicator need on Linux?"


def _kind(messages: Sequence[dict[str, str]]) -> str:
    """Which transform a prompt is for, told by its system message."""
    system = messages[0]["content"]
    for marker, kind in (("passage", "hyde"), ("broader", "step-back"), ("different ways", "expand")):
        if marker in system:
            return kind
    return "decompose"


_REPLIES = {
    "hyde": "The frobnicator needs 2 GB of disk space.",
    "step-back": '{"questions": ["What are the frobnicator system requirements?"]}',
    "expand": '{"questions": ["Frobnicator Linux storage needs?", "Disk needed by frobnicator", '
    '"Frobnicator Linux storage needs?", ""]}',
    "decompose": '{"questions": ["What is the frobnicator?", "What disk space does Linux need?"]}',
}


def transform_generator() -> ScriptedGenerator:
    """Answers each transform's prompt with a fixed reply."""
    return ScriptedGenerator(lambda messages: _REPLIES[_kind(messages)])


def kinds(generator: ScriptedGenerator) -> list[str]:
    return [_kind(messages) for messages in generator.calls]


def _chunk(cid: str) -> Chunk:
    return Chunk(cid, "f.md", cid, "", Location(1, 1), cid, 0, 1)


class Recorder:
    """Stands in for the embedder and the hybrid retriever: records what each is given."""

    def __init__(self) -> None:
        self.embedded: list[list[str]] = []
        self.searches: list[tuple[str, list[Query]]] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.embedded.append(list(texts))
        return np.tile(np.array([1.0, 0.0], dtype=np.float32), (len(texts), 1))

    def hybrid(self, plan: QueryPlan) -> PlannedSearch:
        return PlannedSearch(self, plan)


class PlannedSearch:
    """A retriever that runs its query plan and returns overlapping candidates for each search."""

    def __init__(self, recorder: Recorder, plan: QueryPlan) -> None:
        self._recorder = recorder
        self._plan = plan

    def retrieve(self, query: Query) -> list[Candidate]:
        queries = self._plan(query)
        self._recorder.searches.append((query.text, queries))
        n = len(self._recorder.searches)
        # Overlapping results: "shared" comes back from every search.
        return [
            Candidate(_chunk("shared"), 0.1 * n, origins=(f"dense:{queries[0].label}",)),
            Candidate(_chunk(f"own-{n}"), 0.05, origins=(f"dense:{queries[0].label}",)),
        ]


def _transforms(gen: ScriptedGenerator, cache: CacheStore | None = None) -> Transforms:
    return Transforms(lambda: gen, identity=gen.identity, settings=TransformSettings(expand_n=3), cache=cache)


def retrieve(
    options: TransformOptions,
    gen: ScriptedGenerator,
    rec: Recorder,
    trace: TraceRecorder,
    *,
    bm25_only: bool = False,
    cache: CacheStore | None = None,
    warnings: list[str] | None = None,
) -> list[Candidate]:
    retriever = request_retriever(
        rec.hybrid,
        options,
        embed=None if bm25_only else rec.embed,
        transforms=lambda: _transforms(gen, cache),
        trace=trace,
        warn=(warnings if warnings is not None else []).append,
    )
    return retriever.retrieve(Query(QUESTION))


def test_composed_transforms_embed_every_text_in_one_batch() -> None:
    gen, rec, trace = transform_generator(), Recorder(), TraceRecorder()
    options = TransformOptions(hyde=True, step_back=True, expand=True)
    retrieve(options, gen, rec, trace)
    assert len(rec.embedded) == 1
    assert rec.embedded[0] == [
        QUESTION,
        "What are the frobnicator system requirements?",
        "Frobnicator Linux storage needs?",
        "Disk needed by frobnicator",
        "The frobnicator needs 2 GB of disk space.",
    ]
    assert len(rec.searches) == 1
    queries = rec.searches[0][1]
    assert [q.label for q in queries] == ["question", "step-back", "expand-1", "expand-2", "hyde"]
    assert [q.lexical for q in queries] == [True, True, True, True, False]
    assert all(q.vector is not None for q in queries)
    stages = {t.stage: t for t in trace.stages}
    for name in ("transform:hyde", "transform:step-back", "transform:expand"):
        assert int(str(stages[name].detail["tokens"])) > 0
        assert stages[name].detail["outputs"]
    assert queries[-1].text.startswith("The frobnicator")


def test_query_lists_stage_counts_each_lists_contribution() -> None:
    queries = [Query("q", "question"), Query("h", "hyde", lexical=False)]
    found = [
        Candidate(_chunk("a"), 0.3, origins=("dense:question", "dense:hyde")),
        Candidate(_chunk("b"), 0.2, origins=("dense:hyde",)),
    ]
    staged = query_lists_stage(queries, found)
    assert staged.value == found
    assert staged.detail == {
        "queries": {"question": "q", "hyde": "h"},
        "candidates_by_list": {"dense:question": 1, "dense:hyde": 2},
        "only_from_list": {"dense:hyde": 1},
    }


def test_bm25_mode_drops_the_dense_only_hyde_query() -> None:
    gen, rec = transform_generator(), Recorder()
    retrieve(TransformOptions(hyde=True, step_back=True), gen, rec, TraceRecorder(), bm25_only=True)
    assert [q.label for q in rec.searches[0][1]] == ["question", "step-back"]
    assert rec.embedded == []


def test_decompose_overrides_the_others_and_says_so() -> None:
    gen, rec, trace = transform_generator(), Recorder(), TraceRecorder()
    warnings: list[str] = []
    options = TransformOptions(hyde=True, step_back=True, expand=True, decompose=True)
    found = retrieve(options, gen, rec, trace, warnings=warnings)
    assert kinds(gen) == ["decompose"]
    assert warnings == [DECOMPOSE_NOTE]
    assert any(t.stage == "plan" and t.detail["note"] == DECOMPOSE_NOTE for t in trace.stages)
    assert [q for q, _ in rec.searches] == ["What is the frobnicator?", "What disk space does Linux need?"]
    assert len(rec.embedded) == 1
    ids = [c.chunk.id for c in found]
    assert sorted(ids) == ["own-1", "own-2", "shared"]
    assert len(ids) == len(set(ids))
    shared = next(c for c in found if c.chunk.id == "shared")
    assert shared.score == pytest.approx(0.2)  # the best copy
    assert set(shared.origins) == {"dense:sub-1", "dense:sub-2"}


def test_merge_by_chunk_keeps_best_score_and_rank_order() -> None:
    a = [Candidate(_chunk("x"), 0.9), Candidate(_chunk("y"), 0.5)]
    b = [Candidate(_chunk("z"), 0.8), Candidate(_chunk("x"), 0.95)]
    merged = merge_by_chunk([a, b])
    assert [c.chunk.id for c in merged] == ["x", "z", "y"]
    assert merged[0].score == 0.95


def test_transform_outputs_are_cached(tmp_path: Path) -> None:
    gen = transform_generator()
    store = CacheStore(tmp_path)
    options = TransformOptions(hyde=True, step_back=True, expand=True)
    for _ in range(2):
        retrieve(options, gen, Recorder(), TraceRecorder(), cache=store)
    assert kinds(gen) == ["step-back", "expand", "hyde"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"questions": ["a?", " a? ", "", "b?"]}', ["a?", "b?"]),
        ('{"questions": ["Question: a?", "b', ["a?"]),  # cut off by max_tokens
        ("not json at all", ["orig"]),
        ('{"questions": []}', ["orig"]),
        ('{"questions": ["1", "2", "3", "4", "5", "6"]}', ["1", "2", "3", "4"]),
    ],
)
def test_parse_questions_is_defensive(raw: str, expected: list[str]) -> None:
    assert parse_questions(raw, 4, "orig") == expected


def test_resolve_options_none_means_configured() -> None:
    configured = TransformOptions(hyde=True)
    assert resolve_options(configured) == configured
    assert resolve_options(configured, hyde=False, expand=True, decompose=True) == TransformOptions(
        False, False, True, True
    )


# -- the real SmolLM2 model --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def smol(tmp_path_factory: pytest.TempPathFactory, _state_dirs: dict[str, Path]) -> Raggity:
    folder = tmp_path_factory.mktemp("smol")
    docs = folder / "docs"
    docs.mkdir()
    (docs / "install.md").write_text(
        "# Frobnicator\n\n## Installing on Linux\n\nOn Linux the frobnicator needs 2 GB of free disk space.\n"
        "Unpack the tarball into /opt/frobnicator.\n",
        encoding="utf-8",
    )
    (docs / "bread.txt").write_text(
        "Feed the sourdough starter every day with rye flour and water.\n", encoding="utf-8"
    )
    # One llama.cpp thread: on a busy 2-core machine, two spinning threads are many times slower.
    with isolated_state(_state_dirs):  # module fixtures run outside conftest's per-test isolation
        session = Raggity(load_config(write_config(folder, generation={"threads": 1})))
        session.ingest([docs])
        session.models.generator  # noqa: B018 - resolve and hash the model inside the isolated state
    return session


def test_real_model_transforms_reach_fusion(smol: Raggity) -> None:
    trace = TraceRecorder()
    smol.searcher.retrieve(
        QUESTION, trace, rerank=False, transforms=TransformOptions(hyde=True, step_back=True, expand=True)
    )
    stages = {t.stage: t for t in trace.stages}
    for name in ("transform:hyde", "transform:step-back", "transform:expand"):
        outputs = stages[name].detail["outputs"]
        assert isinstance(outputs, list)
        assert outputs
        assert all(isinstance(o, str) and o.strip() for o in outputs)
        assert int(str(stages[name].detail["tokens"])) > 0
    assert len(stages["transform:expand"].detail["outputs"]) <= 3  # type: ignore[arg-type]
    assert len(stages["transform:step-back"].detail["outputs"]) == 1  # type: ignore[arg-type]
    dense_lists = stages["dense"].detail["lists"]
    assert isinstance(dense_lists, dict)
    assert "dense:hyde" in dense_lists
    assert len(dense_lists) >= 2
    planned = stages["query-lists"].detail["queries"]
    assert isinstance(planned, dict)
    assert set(dense_lists) == {f"dense:{label}" for label in planned}
    bm25_lists: Any = stages["bm25"].detail["lists"]
    assert stages["fusion"].n_in == sum(dense_lists.values()) + sum(bm25_lists.values())


def test_real_model_decompose_parses_every_seed(smol: Raggity) -> None:
    model = RecordingGenerator(smol.models.generator)
    transforms = Transforms(
        lambda: model,
        identity=model.identity,
        settings=TransformSettings(temperature=0.8, question_tokens=64),
    )
    question = "Where is the frobnicator unpacked, and how much disk space does it need on Linux?"
    for seed in range(15):
        smol.models.generator._llm.set_seed(seed)  # type: ignore[attr-defined]
        trace = TraceRecorder()
        subs = transforms.decompose(question, trace)
        assert 1 <= len(subs) <= MAX_SUB_QUESTIONS
        assert all(isinstance(s, str) and s.strip() for s in subs)
        assert trace.stages[0].detail["outputs"] == subs
        # Parsed from the reply itself, not the fallback to the original question.
        assert parse_questions(model.replies[-1], MAX_SUB_QUESTIONS, "\x00") != ["\x00"], model.replies[-1]
