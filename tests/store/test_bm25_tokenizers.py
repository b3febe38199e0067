"""Keyword search beyond English through real Tantivy: Chinese, Japanese and Korean text is found by
its words with the multilingual tokenizer, code identifiers whole; equal scores come back in chunk id
order whatever order the chunks were stored in."""

from __future__ import annotations

from pathlib import Path

import pytest

from raggity.core.types import Chunk, Location
from raggity.store.bm25_index import EN_STEM, MULTILINGUAL, Bm25Reader, Bm25Writer, multilingual_terms

TEXTS = {
    "zh-ml": "机器学习是人工智能的一个分支，它使计算机能够从数据中学习。",
    "zh-tea": "中国的茶文化有着悠久的历史，绿茶和乌龙茶都很受欢迎。",
    "ja-tower": "東京タワーは東京都港区にある電波塔で、一九五八年に完成しました。",
    "ja-sushi": "寿司は日本の伝統的な料理で、新鮮な魚と酢飯で作られます。",
    "ko-seoul": "서울은 대한민국의 수도이며 가장 큰 도시입니다.",
    "ko-kimchi": "김치는 배추와 고춧가루로 만드는 한국의 전통 발효 음식입니다.",
    "code-call": "To search, call parse_query on the text and pass the result to the searcher.",
    "code-prose": "First parse the text, then the query is passed to the searcher with the text.",
    "en-restore": "Restoring a backup replaces the current files with the saved copies.",
}


def _chunk(chunk_id: str, text: str) -> Chunk:
    return Chunk(chunk_id, "notes.md", text, "", Location(1, 1), chunk_id, 0, len(text.split()))


def _index(folder: Path, tokenizer: str, items: list[tuple[str, str]]) -> Bm25Reader:
    writer = Bm25Writer(folder, tokenizer)
    writer.add([_chunk(chunk_id, text) for chunk_id, text in items])
    writer.commit()
    writer.close()
    return Bm25Reader(folder)


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Bm25Reader]:
    root = tmp_path_factory.mktemp("bm25")
    return {name: _index(root / name, name, list(TEXTS.items())) for name in (EN_STEM, MULTILINGUAL)}


def _top(reader: Bm25Reader, query: str) -> str | None:
    hits = reader.search(query, 3)
    return hits[0][0] if hits else None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("人工智能", "zh-ml"),  # artificial intelligence, inside a sentence
        ("乌龙茶的历史", "zh-tea"),  # oolong tea's history: no sentence contains the phrase whole
        ("電波塔", "ja-tower"),  # radio tower
        ("新鮮な魚", "ja-sushi"),  # fresh fish
        ("대한민국", "ko-seoul"),  # the Republic of Korea, written 대한민국의 in the text
        ("한국 전통 음식", "ko-kimchi"),  # Korean traditional food
    ],
)
def test_cjk_text_is_found_by_its_words_with_the_multilingual_tokenizer(
    indexes: dict[str, Bm25Reader], query: str, expected: str
) -> None:
    assert _top(indexes[MULTILINGUAL], query) == expected


@pytest.mark.parametrize("query", ["人工智能", "電波塔", "대한민국", "서울"])
def test_en_stem_finds_no_cjk_word_inside_a_sentence(indexes: dict[str, Bm25Reader], query: str) -> None:
    """Why the choice exists: en_stem indexes a whole CJK run up to the next space or punctuation
    as one word (서울은 is Seoul with a particle)."""
    assert indexes[EN_STEM].search(query, 3) == []


def test_the_index_remembers_its_tokenizer(indexes: dict[str, Bm25Reader]) -> None:
    assert (indexes[EN_STEM].tokenizer, indexes[MULTILINGUAL].tokenizer) == (EN_STEM, MULTILINGUAL)


def test_a_code_identifier_is_searchable_whole(indexes: dict[str, Bm25Reader]) -> None:
    hits = indexes[MULTILINGUAL].search("parse_query", 5)
    assert [cid for cid, _ in hits][:1] == ["code-call"]
    # Its parts still find it, next to prose that uses them as words.
    assert "code-call" in {cid for cid, _ in indexes[MULTILINGUAL].search("query", 5)}


def test_en_stem_still_stems_english(indexes: dict[str, Bm25Reader]) -> None:
    assert _top(indexes[EN_STEM], "restore backups") == "en-restore"


def test_multilingual_terms() -> None:
    assert multilingual_terms("東京タワー") == ["東京", "京タ", "タワ", "ワー"]
    assert multilingual_terms("猫") == ["猫"]
    assert multilingual_terms("getHTTPResponse ＡＢＣ") == [
        "gethttpresponse",
        "get",
        "http",
        "response",
        "abc",
    ]
    assert multilingual_terms("Grüße naïve_café") == ["grüße", "naïve_café", "naïve", "café"]
    assert multilingual_terms("ｶﾀｶﾅ") == ["カタ", "タカ", "カナ"]  # half-width katakana, normalised
    assert multilingual_terms("x" * 101 + " ok") == ["ok"]


@pytest.mark.parametrize("tokenizer", [EN_STEM, MULTILINGUAL])
def test_equal_scores_come_back_in_chunk_id_order_whatever_the_storage_order(
    tmp_path: Path, tokenizer: str
) -> None:
    """An index updated file by file stores chunks in another order than a clean ingest of the same
    files; identical chunks score the same and must rank the same in both."""
    same = "The garden shed key hangs behind the kitchen door."
    items = [("c3", same), ("a1", same), ("b2", same), ("d4", "The kitchen door is painted blue.")]
    forward = _index(tmp_path / "forward", tokenizer, items)
    backward = _index(tmp_path / "backward", tokenizer, items[::-1])
    expected = ["a1", "b2", "c3", "d4"]
    assert [cid for cid, _ in forward.search("garden shed key kitchen", 4)] == expected
    assert [cid for cid, _ in backward.search("garden shed key kitchen", 4)] == expected
    # The cut at k takes the smallest ids among the tied, not the first stored.
    assert [cid for cid, _ in forward.search("garden shed key", 1)] == ["a1"]
    assert [cid for cid, _ in backward.search("garden shed key", 2)] == ["a1", "b2"]
