"""`ask` end to end: abstention without a model call, the real pipeline with SmolLM, and its plumbing
checked through a scripted generator (the 135M model is too small to cite reliably)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.core.types import ABSTAIN_MESSAGE, Answer
from raggity.pipeline.generation import TextGenerator
from raggity.pipeline.models import load_generator
from raggity.store.vector_table import VectorTableReader
from tests.isolation import isolated_state
from tests.support import (
    RecordingGenerator,
    ScriptedGenerator,
    line_range,
    must_not_generate,
    store_ids,
    write_config,
    write_corpus,
)

PIPELINE_ORDER = [
    "embed",
    "dense",
    "bm25",
    "fusion",
    "hydrate",
    "rerank",
    "dedup",
    "abstain",
    "select",
    "parent-expansion",
    "load-model",
    "prompt",
    "generate",
    "citations",
]

# One section of ~200 tokens: with chunk_tokens=64 and parent_tokens=256 it is several chunks
# under a single parent.
LIGHTHOUSE_FIRST = "The Fresnel lens is polished with chamois leather every morning at seven o'clock."
LIGHTHOUSE_LAST = "Paraffin for the lamp arrives by supply boat on the first Monday of each month."
LIGHTHOUSE_MD = f"""\
# Lighthouse keeping

{LIGHTHOUSE_FIRST} Fingerprints on the glass scatter the beam, so the keeper wears cotton gloves
while working on the prisms and never touches them with bare hands.

At dusk the keeper lights the lamp and winds the clockwork that turns the optic. The weights
must be wound again every four hours, so the night is split into watches between two keepers.

Every watch is recorded in the logbook: the weather, passing ships, and any fault in the light.
The district inspector reads the logbook during each quarterly visit and signs every page.

{LIGHTHOUSE_LAST} The barrels are stored in a stone shed away from the tower, because a fire in
the tower itself would leave the coast dark.
"""

SOURCE_BLOCK = re.compile(r'<source id="(\d+)" file="([^"]*)" at="([^"]*)">\n(.*?)\n</source>', re.DOTALL)


@dataclass(frozen=True)
class PromptBlock:
    n: int
    file: str
    at: str
    text: str


def prompt_blocks(messages: Sequence[dict[str, str]]) -> list[PromptBlock]:
    user = next(m["content"] for m in messages if m["role"] == "user")
    return [PromptBlock(int(n), f, at, text) for n, f, at, text in SOURCE_BLOCK.findall(user)]


def scripted(script: Callable[[list[PromptBlock]], str]) -> ScriptedGenerator:
    """A generator whose answer is written by `script` from the sources in the prompt."""
    return ScriptedGenerator(lambda messages: script(prompt_blocks(messages)))


def prompts(generator: ScriptedGenerator) -> list[list[PromptBlock]]:
    return [prompt_blocks(messages) for messages in generator.calls]


@dataclass(frozen=True)
class Corpus:
    files: dict[str, Path]
    lighthouse: Path
    configs: dict[str, Path]
    session: Raggity

    def fresh(self, name: str, generator: TextGenerator | None = None) -> Raggity:
        """A new session on the shared index, reusing the already loaded embedder. `generator`
        defaults to one that fails the test if the pipeline asks it for anything."""
        return Raggity(
            load_config(self.configs[name]),
            embedder=self.session.embedder,
            generator=generator or ScriptedGenerator(must_not_generate),
        )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, _state_dirs: dict[str, Path]) -> Corpus:
    root = tmp_path_factory.mktemp("ask")
    index = {"path": str(root / "index")}
    ingest = {"chunk_tokens": 64, "parent_tokens": 256}
    configs = {
        "base": write_config(root / "base", index=index, ingest=ingest),
        # One thread: OpenMP workers that spin-wait crawl when the two cores are shared with other work.
        "real": write_config(
            root / "real", index=index, ingest=ingest, retrieval={"top_k": 3}, generation={"threads": 1}
        ),
        "children": write_config(root / "children", index=index, ingest=ingest, retrieval={"top_k": 1}),
        "parents": write_config(
            root / "parents", index=index, ingest=ingest, retrieval={"top_k": 1, "parent_document": True}
        ),
    }
    files = write_corpus(root / "docs")
    lighthouse = root / "docs" / "lighthouse.md"
    lighthouse.write_text(LIGHTHOUSE_MD, encoding="utf-8")
    with isolated_state(_state_dirs):
        session = Raggity(load_config(configs["base"]))
        report = session.ingest([root / "docs"])
    assert report.added == len(files) + 1
    return Corpus(files, lighthouse.resolve(), configs, session)


def stage_names(answer: Answer) -> list[str]:
    return [t.stage for t in answer.trace]


# -- abstention --------------------------------------------------------------------------------


def test_unrelated_question_abstains_without_loading_a_model(corpus: Corpus) -> None:
    answer = corpus.fresh("base").ask("What is the capital of Mongolia?")
    assert answer.abstained
    assert answer.text == ABSTAIN_MESSAGE
    assert answer.citations == ()
    names = stage_names(answer)
    assert names == PIPELINE_ORDER[: PIPELINE_ORDER.index("abstain") + 1]
    abstain = answer.trace[-1]
    assert abstain.detail["abstained"] is True
    assert abstain.detail["best_cosine"] < abstain.detail["floor"]  # type: ignore[operator]


def test_the_must_not_generate_guard_is_effective(corpus: Corpus) -> None:
    """The guard above proves something only if asking a covered question does hit it."""
    with pytest.raises(AssertionError, match="must not be used"):
        corpus.fresh("base").ask("How much disk space does frobnicator need on Linux?")


def test_nothing_indexed_abstains_without_loading_a_model(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "blank.txt").write_text("   \n\n\t\n", encoding="utf-8")
    session = Raggity(load_config(config), generator=ScriptedGenerator(must_not_generate))
    report = session.ingest([tmp_path / "docs"])
    assert report.chunks_written == 0
    assert [s.source for s in report.skipped] == [str((tmp_path / "docs" / "blank.txt").resolve())]
    assert store_ids(session.layout) == set()

    answer = session.ask("How much disk space does frobnicator need on Linux?")
    assert answer.abstained
    assert answer.text == ABSTAIN_MESSAGE
    assert "load-model" not in stage_names(answer)
    assert answer.trace[stage_names(answer).index("fusion")].n_out == 0


# -- the real model ------------------------------------------------------------------------------


def test_real_answer_with_smollm(corpus: Corpus) -> None:
    config = load_config(corpus.configs["real"])
    recording = RecordingGenerator(load_generator(config))
    session = corpus.fresh("real", recording)
    streamed: list[str] = []
    answer = session.ask("How much free disk space does frobnicator need on Linux?", on_token=streamed.append)

    assert not answer.abstained
    assert stage_names(answer) == PIPELINE_ORDER
    stages = {t.stage: t for t in answer.trace}
    assert stages["rerank"].detail["skipped"] == "reranker off or not installed"
    assert stages["parent-expansion"].detail["enabled"] is False
    assert "smollm2-135m-instruct" in str(stages["load-model"].detail["model"])
    assert answer.text == "".join(streamed).strip()
    assert stages["generate"].detail["chars"] == len(answer.text)

    [blocks] = [prompt_blocks(messages) for messages in recording.calls]
    assert len(blocks) == stages["prompt"].n_out == 3
    assert str(corpus.files["markdown"]) in {b.file for b in blocks}
    assert any("2 GB" in b.text for b in blocks if b.file == str(corpus.files["markdown"]))
    # Whatever the model wrote, citations can only point at sources it was given.
    by_n = {b.n: b for b in blocks}
    for citation in answer.citations:
        assert citation.source == by_n[citation.n].file
        assert str(citation.location) == by_n[citation.n].at


# -- plumbing, with a scripted generator ---------------------------------------------------------

LINUX_SENTENCE = "On Linux, frobnicator needs 2 GB of free disk space."


def test_citations_resolve_to_file_and_lines_and_flag_unsupported_ones(corpus: Corpus) -> None:
    picked: dict[str, int] = {}

    def script(blocks: list[PromptBlock]) -> str:
        right = next(b for b in blocks if b.file == str(corpus.files["markdown"]) and "2 GB" in b.text)
        wrong = next(b for b in blocks if b.file != str(corpus.files["markdown"]))
        picked.update(right=right.n, wrong=wrong.n)
        return (
            f"{LINUX_SENTENCE} [{right.n}] "
            f"Frobnicator refuses to install on Linux with less disk space than that. [{wrong.n}]"
        )

    generator = scripted(script)
    session = corpus.fresh("base", generator)
    answer = session.ask("How much disk space does frobnicator need on Linux?")

    assert not answer.abstained
    assert len(prompts(generator)) == 1
    by_n = {c.n: c for c in answer.citations}
    assert set(by_n) == {picked["right"], picked["wrong"]}

    right = by_n[picked["right"]]
    markdown = corpus.files["markdown"]
    assert right.source == str(markdown)
    assert right.supported
    file_text = markdown.read_text(encoding="utf-8")
    start = file_text.index(right.text.strip())
    first = file_text.count("\n", 0, start) + 1
    last = first + right.text.strip().count("\n")
    assert str(right.location) == f"lines {first}-{last}"
    sentence_first, sentence_last = line_range(markdown, "frobnicator needs 2 GB of free disk space")
    assert first <= sentence_first <= sentence_last <= last

    wrong = by_n[picked["wrong"]]
    assert not wrong.supported
    assert wrong.source != str(markdown)
    assert wrong.source == next(b.file for b in prompts(generator)[0] if b.n == picked["wrong"])
    assert answer.unsupported_sentences == (
        f"Frobnicator refuses to install on Linux with less disk space than that. [{picked['wrong']}]",
    )
    citations_stage = answer.trace[-1]
    assert citations_stage.stage == "citations"
    assert citations_stage.detail["unsupported"] == 1
    assert citations_stage.detail["invalid"] == []


def test_citation_of_a_missing_source_is_reported_invalid(corpus: Corpus) -> None:
    generator = scripted(lambda blocks: f"{LINUX_SENTENCE} [{len(blocks) + 3}]")
    session = corpus.fresh("base", generator)
    answer = session.ask("How much disk space does frobnicator need on Linux?")
    assert answer.citations == ()
    assert answer.unsupported_sentences == ()
    assert answer.trace[-1].detail["invalid"] == [len(prompts(generator)[0]) + 3]


def parent_check(corpus: Corpus, config: str) -> tuple[list[PromptBlock], str]:
    generator = scripted(lambda blocks: "It is polished every morning. [1]")
    session = corpus.fresh(config, generator)
    answer = session.ask("When is the Fresnel lens polished, and with what?")
    assert not answer.abstained
    [blocks] = prompts(generator)
    return blocks, answer.trace[stage_names(answer).index("parent-expansion")].detail["enabled"]  # type: ignore[return-value]


def test_parent_document_gives_the_model_the_neighbouring_chunks(corpus: Corpus) -> None:
    # The two sentences sit in different chunks of one parent passage.
    table = VectorTableReader(corpus.session.layout.table)
    chunks = [
        s.chunk
        for s in table.fetch(sorted(store_ids(corpus.session.layout))).values()
        if s.chunk.source == str(corpus.lighthouse)
    ]
    [first] = [c for c in chunks if LIGHTHOUSE_FIRST in c.text]
    [last] = [c for c in chunks if LIGHTHOUSE_LAST in c.text]
    assert first.id != last.id
    assert first.parent_id == last.parent_id

    blocks, enabled = parent_check(corpus, "children")
    assert enabled is False
    [block] = blocks
    assert block.file == str(corpus.lighthouse)
    assert LIGHTHOUSE_FIRST in " ".join(block.text.split())
    assert LIGHTHOUSE_LAST not in " ".join(block.text.split())

    blocks, enabled = parent_check(corpus, "parents")
    assert enabled is True
    [block] = blocks
    flat = " ".join(block.text.split())
    assert block.file == str(corpus.lighthouse)
    assert LIGHTHOUSE_FIRST in flat
    assert LIGHTHOUSE_LAST in flat
    siblings = sorted((c for c in chunks if c.parent_id == first.parent_id), key=lambda c: c.ordinal)
    assert block.at == f"lines {siblings[0].location.line_start}-{siblings[-1].location.line_end}"
