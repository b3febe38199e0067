"""Cached answers keep each citation's full location, anchor included, and the sources the model read;
entries from before anchors and before the sources read still read."""

from __future__ import annotations

import json
from dataclasses import replace

from raggity.core.types import Answer, Citation, Location
from raggity.pipeline.answer_cache import answer_from_json, answer_to_json


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


def test_the_sources_read_survive_the_cache_and_older_entries_have_none() -> None:
    read = (Citation(1, "copy.html", Location(0, 0, anchor="copy.deepcopy"), "text", supported=True),
            Citation(2, "copy.html", Location(4, 6), "other text", supported=False))  # fmt: skip
    data = answer_to_json(replace(answer(Location(0, 0)), sources_read=read))
    assert answer_from_json(json.loads(json.dumps(data))).sources_read == read
    del data["sources_read"]
    assert answer_from_json(data).sources_read == ()
