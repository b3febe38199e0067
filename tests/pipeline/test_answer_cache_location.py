"""Cached answers keep each citation's full location, anchor included, and the sources the model read.
Entries from before anchors still read; entries from before the sources read are misses."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from raggity.core.types import Answer, Citation, Location
from raggity.pipeline.answer.cache import AnswerCache, answer_from_json, answer_to_json
from raggity.store.cache_store import CacheStore


def answer(location: Location) -> Answer:
    return Answer("q?", "It copies deeply [1].", False, (Citation(1, "copy.html", location, "text"),), ())


def test_anchor_survives_the_cache_round_trip() -> None:
    location = Location(0, 0, anchor="copy.deepcopy")
    restored = answer_from_json(json.loads(json.dumps(answer_to_json(answer(location)))))
    assert restored.citations[0].location == location


def test_entry_written_before_anchors_reads_without_one() -> None:
    data = answer_to_json(answer(Location(3, 9)))
    data["citations"][0]["location"] = [3, 9, None, None]
    assert answer_from_json(data).citations[0].location == Location(3, 9)


def test_the_sources_read_survive_the_cache_and_an_older_entry_is_a_miss(tmp_path: Path) -> None:
    read = (Citation(1, "copy.html", Location(0, 0, anchor="copy.deepcopy"), "text", supported=True),
            Citation(2, "copy.html", Location(4, 6), "other text", supported=False))  # fmt: skip
    cache = AnswerCache(CacheStore(tmp_path), "model", seed=0)
    cache.put("new", replace(answer(Location(0, 0)), sources_read=read))
    restored = cache.get("new")
    assert restored is not None
    assert restored.sources_read == read
    # An entry from before the sources read were kept: answered anew, so that --json lists them.
    older = answer_to_json(answer(Location(0, 0)))
    del older["sources_read"]
    cache.store.put("older", older)
    assert cache.get("older") is None


def test_paraphrases_survive_the_cache_and_an_entry_without_them_is_a_miss(tmp_path: Path) -> None:
    said = replace(answer(Location(0, 0)).citations[0], paraphrases=("It makes a deep copy.",))
    cache = AnswerCache(CacheStore(tmp_path), "model", seed=0)
    cache.put("new", replace(answer(Location(0, 0)), citations=(said,)))
    restored = cache.get("new")
    assert restored is not None
    assert restored.citations == (said,)
    # Stored before the meaning stage ran ahead of storing: a hit would skip that stage, so a miss.
    older = answer_to_json(answer(Location(0, 0)))
    del older["citations"][0]["paraphrases"]
    cache.store.put("older", older)
    assert cache.get("older") is None
