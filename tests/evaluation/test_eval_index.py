"""`rag eval --index FOLDER` writes only a new or empty folder or this dataset's own evaluation index:
evaluating deletes whatever else the index lists."""

from __future__ import annotations

import json
from pathlib import Path

from tests.store.test_ownership import tree
from tests.support import assert_clean_error, rag, write_config, write_corpus


def _dataset(folder: Path, docs: dict[str, str]) -> Path:
    (folder / "qrels").mkdir(parents=True)
    corpus = "".join(json.dumps({"_id": key, "title": "", "text": text}) + "\n" for key, text in docs.items())
    (folder / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    first = next(iter(docs))
    (folder / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": docs[first]}) + "\n", encoding="utf-8"
    )
    (folder / "qrels" / "test.tsv").write_text(
        f"query-id\tcorpus-id\tscore\nq1\t{first}\t1\n", encoding="utf-8"
    )
    return folder


def test_eval_refuses_an_index_of_files_and_leaves_it_whole(tmp_path: Path) -> None:
    """Before, `rag eval DS --index <the user's index>` replaced every file in it with the corpus."""
    write_config(tmp_path, index={"path": str(tmp_path / "mine")})
    write_corpus(tmp_path / "docs")
    assert rag("ingest", "docs", cwd=tmp_path).returncode == 0
    before = tree(tmp_path / "mine")
    dataset = _dataset(
        tmp_path / "tiny", {"d1": "Comets have icy nuclei.", "d2": "Maple syrup is boiled sap."}
    )
    result = rag("eval", str(dataset), "--index", str(tmp_path / "mine"), cwd=tmp_path)
    assert result.returncode == 8, result.stderr
    line = assert_clean_error(result.stderr)
    assert "not an evaluation index of tiny" in line
    assert tree(tmp_path / "mine") == before


def test_eval_reuses_its_own_index_and_refuses_another_datasets(tmp_path: Path) -> None:
    write_config(tmp_path)
    index = tmp_path / "eval-index"
    tiny = _dataset(tmp_path / "tiny", {"d1": "Comets have icy nuclei.", "d2": "Maple syrup is boiled sap."})
    other = _dataset(tmp_path / "other", {"x1": "Granite is an igneous rock."})
    for _ in range(2):
        done = rag("eval", str(tiny), "--index", str(index), "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["documents"] == 2
    before = tree(index)
    refused = rag("eval", str(other), "--index", str(index), cwd=tmp_path)
    assert refused.returncode == 8
    assert "not an evaluation index of other" in assert_clean_error(refused.stderr)
    assert tree(index) == before
