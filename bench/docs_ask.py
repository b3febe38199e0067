"""Documentation questions asked the way a user asks them: `rag ingest DOCS`, then `rag ask`.

    python -m bench.docs_ask SET --index INDEX [--per-group 12] [--seed 0] [--details FILE.jsonl] [-c raggity.toml]
    python -m bench.docs_questions score FILE.jsonl --set SET/beir

SET is a folder that `python -m bench.docs_questions build` wrote (OUT/NAME: docs/, beir/, ooc/).
`rag eval SET/beir --answers` indexes one flat text per page, so its chunks have no heading below the
page title and no anchors. This indexes SET/docs through the ingest a user runs (the HTML reader,
heading trails, anchors; INDEX is reused when it already holds them) and asks the same sample (the
same seed and per-group size draw the same questions as `rag eval`) through `Raggity.ask`, the door
`rag ask` opens. Citations are named by their path under SET/docs, as the corpus ids are, so the
details lines are `rag eval --details` lines and `bench.docs_questions score` reads them.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.config.schema import IndexConfig
from raggity.core.types import Answer
from raggity.evaluation.answer_run import run_cases, sample_cases, summarize_all
from raggity.evaluation.dataset import load_beir


def relative_source(source: str, root: Path) -> str:
    """An indexed source named by its path under `root`, as a corpus id is."""
    return source.removeprefix(str(root.resolve()) + "/")


def relative_citations(answer: Answer, root: Path) -> Answer:
    """`answer` with each cited source named by its path under `root`."""
    return replace(
        answer, citations=tuple(replace(c, source=relative_source(c.source, root)) for c in answer.citations)
    )


class RelativeSources:
    """Asks through the session and names each cited source by its path under `root`."""

    def __init__(self, session: Raggity, root: Path) -> None:
        self._session = session
        self._root = root

    def ask(
        self, question: str, *, on_token: Callable[[str], None] | None = None, use_cache: bool | None = None
    ) -> Answer:
        return relative_citations(
            self._session.ask(question, on_token=on_token, use_cache=use_cache), self._root
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("set_dir", type=Path, help="a docs_questions set: OUT/NAME")
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--per-group", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--details", type=Path)
    parser.add_argument("-c", "--config", type=Path)
    args = parser.parse_args()
    docs = args.set_dir / "docs"
    dataset = load_beir(args.set_dir / "beir")
    cases = sample_cases(
        dataset.questions, load_beir(args.set_dir / "ooc").queries, args.per_group, args.seed
    )
    config = load_config(args.config)
    session = Raggity(replace(config, index=IndexConfig(str(args.index.resolve())), source=config.source))
    report = session.ingest([docs])
    print(f"ingested {docs}: {report}", flush=True)
    records = run_cases(RelativeSources(session, docs), cases)
    if args.details is not None:
        args.details.write_text(
            "".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
        )
    for score in summarize_all(records):
        print(json.dumps(asdict(score)), flush=True)


if __name__ == "__main__":
    main()
