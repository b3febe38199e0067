"""[retrieval] bm25_tokenizer is part of the index fingerprint: changing it rebuilds the index at the
next ingest, after which keyword search finds Chinese, Japanese and Korean words."""

from __future__ import annotations

from pathlib import Path

from raggity.api.session import Raggity
from raggity.config.loader import load_config
from raggity.store.manifest import load_manifest
from tests.support import write_config

FILES = {
    "zh.md": "# 笔记\n\n机器学习是人工智能的一个分支，它使计算机能够从数据中学习。\n",
    "ja.md": "# メモ\n\n東京タワーは東京都港区にある電波塔で、一九五八年に完成しました。\n",
    "ko.md": "# 메모\n\n서울은 대한민국의 수도이며 가장 큰 도시입니다.\n",
    "en.md": "# Notes\n\nThe garden shed key hangs behind the kitchen door.\n",
}


def _keyword_sources(session: Raggity, query: str) -> list[str]:
    return [Path(c.chunk.source).name for c in session.search(query, mode="bm25", rerank=False).candidates]


def test_changing_the_tokenizer_rebuilds_and_finds_cjk_words(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in FILES.items():
        (docs / name).write_text(text, encoding="utf-8")
    config = write_config(tmp_path)
    first = Raggity(load_config(config))
    assert not first.ingest([docs]).rebuilt
    assert _keyword_sources(first, "人工智能") == []

    write_config(tmp_path, retrieval={"bm25_tokenizer": "multilingual"})
    second = Raggity(load_config(config))
    report = second.ingest([docs])
    assert report.rebuilt
    assert load_manifest(second.layout.manifest).fingerprint.bm25_tokenizer == "multilingual"  # type: ignore[union-attr]
    assert _keyword_sources(second, "人工智能")[:1] == ["zh.md"]
    assert _keyword_sources(second, "電波塔")[:1] == ["ja.md"]
    assert _keyword_sources(second, "대한민국")[:1] == ["ko.md"]
    assert _keyword_sources(second, "garden shed")[:1] == ["en.md"]
    assert not second.ingest([docs]).rebuilt


def test_an_index_from_before_the_key_is_not_rebuilt(tmp_path: Path) -> None:
    """Manifests written before bm25_tokenizer existed have no such field; they were en_stem."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "en.md").write_text(FILES["en.md"], encoding="utf-8")
    config = write_config(tmp_path)
    session = Raggity(load_config(config))
    session.ingest([docs])
    manifest = session.layout.manifest
    manifest.write_text(manifest.read_text().replace('"bm25_tokenizer": "en_stem",', ""))
    assert "bm25_tokenizer" not in manifest.read_text()
    assert not Raggity(load_config(config)).ingest([docs]).rebuilt
