"""OnnxCrossEncoder against a small real ONNX graph that scores query/passage token overlap."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from raggity.core.errors import ModelError
from raggity.inference.cross_encoder import OnnxCrossEncoder, find_cross_encoder_files

from .cross_encoder_model import bert_tokenizer_json, build_test_cross_encoder

QUERY = "how do cats purr"
PASSAGES = [
    "the weather is mild today",
    "how do cats purr when they are happy",
    "cats sleep a lot",
    "",
    "a very long passage about gardening " * 12,
    "cats purr",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_test_cross_encoder(tmp_path_factory.mktemp("cross-encoder"))


def test_more_shared_words_score_higher(model_dir: Path) -> None:
    encoder = OnnxCrossEncoder(model_dir, threads=1)
    scores = encoder.score(QUERY, ["dogs bark at night", "cats sleep", "how do cats purr so loudly"])
    assert scores[0] < scores[1] < scores[2]
    assert all(0.0 < s < 1.0 for s in scores)


class RecordingSession:
    """Wraps the real ONNX Runtime session and keeps the feeds of every run."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.feeds: list[dict[str, np.ndarray[Any, Any]]] = []

    def get_inputs(self) -> Any:
        return self.inner.get_inputs()

    def get_outputs(self) -> Any:
        return self.inner.get_outputs()

    def run(self, outputs: Any, feeds: dict[str, np.ndarray[Any, Any]]) -> Any:
        self.feeds.append(dict(feeds))
        return self.inner.run(outputs, feeds)


def recorded(model_dir: Path, **options: Any) -> tuple[OnnxCrossEncoder, RecordingSession]:
    sessions: list[RecordingSession] = []

    def wrap(inner: Any) -> RecordingSession:
        sessions.append(RecordingSession(inner))
        return sessions[-1]

    encoder = OnnxCrossEncoder(model_dir, session=wrap, **options)
    return encoder, sessions[0]


def test_empty_passages_skip_the_model(model_dir: Path) -> None:
    encoder, session = recorded(model_dir)
    assert encoder.score(QUERY, []) == []
    assert session.feeds == []
    encoder.score(QUERY, ["cats"])
    assert len(session.feeds) == 1  # the recording would have seen a run


def test_batches_restore_input_order(model_dir: Path) -> None:
    batched = OnnxCrossEncoder(model_dir, batch_size=2).score(QUERY, PASSAGES)
    single = OnnxCrossEncoder(model_dir, batch_size=1)
    one_by_one = [single.score(QUERY, [p])[0] for p in PASSAGES]
    assert batched == pytest.approx(one_by_one)
    assert len(set(batched)) > 2


def test_batches_are_length_sorted_and_padded_to_their_longest(model_dir: Path) -> None:
    encoder, session = recorded(model_dir, batch_size=2)
    encoder.score(QUERY, PASSAGES)
    feeds_seen = session.feeds
    widths = [feeds["input_ids"].shape[1] for feeds in feeds_seen]
    assert len(widths) == 3
    assert widths == sorted(widths)
    for feeds in feeds_seen:
        assert set(feeds) == {"input_ids", "attention_mask", "token_type_ids"}
        assert all(array.dtype == np.int64 for array in feeds.values())
        # Padded to the longest row of this batch, not of the whole call.
        assert feeds["attention_mask"].sum(axis=1).max() == feeds["input_ids"].shape[1]


def test_long_passages_are_truncated_not_the_query(model_dir: Path) -> None:
    encoder, session = recorded(model_dir, max_tokens=32)
    feeds_seen = session.feeds
    filler = "lorem ipsum dolor " * 2000
    early, late, none = encoder.score(QUERY, ["cats purr " + filler, filler + " cats purr", filler])
    assert max(feeds["input_ids"].shape[1] for feeds in feeds_seen) <= 32
    # Query words at the passage start survive truncation; those past the cut are gone.
    assert early > late
    assert late == pytest.approx(none)


def test_overlong_query_is_clipped_instead_of_failing(model_dir: Path) -> None:
    encoder = OnnxCrossEncoder(model_dir, max_tokens=16)
    (score,) = encoder.score("cats purr " * 100, ["cats purr " * 100])
    assert 0.0 < score < 1.0


def test_graph_without_token_type_ids(tmp_path: Path, model_dir: Path) -> None:
    folder = build_test_cross_encoder(tmp_path, with_token_type_ids=False)
    without = OnnxCrossEncoder(folder).score(QUERY, PASSAGES)
    with_types = OnnxCrossEncoder(model_dir).score(QUERY, PASSAGES)
    assert without == pytest.approx(with_types)


def test_rank1_logits_are_accepted(tmp_path: Path, model_dir: Path) -> None:
    folder = build_test_cross_encoder(tmp_path, rank2_output=False)
    assert OnnxCrossEncoder(folder).score(QUERY, PASSAGES) == pytest.approx(
        OnnxCrossEncoder(model_dir).score(QUERY, PASSAGES)
    )


@pytest.mark.parametrize(
    ("layout", "expected"),
    [("onnx", "onnx/model.onnx"), ("quantized", "onnx/model_quantized.onnx"), ("root", "model.onnx")],
)
def test_layouts_are_found(tmp_path: Path, layout: Any, expected: str) -> None:
    folder = build_test_cross_encoder(tmp_path, layout=layout)
    model, tokenizer = find_cross_encoder_files(folder)
    assert model == folder / expected
    assert tokenizer == folder / "tokenizer.json"
    assert len(OnnxCrossEncoder(folder).score(QUERY, ["cats"])) == 1


def test_quantized_export_is_preferred(tmp_path: Path) -> None:
    build_test_cross_encoder(tmp_path, layout="onnx")
    build_test_cross_encoder(tmp_path, layout="quantized")
    model, _ = find_cross_encoder_files(tmp_path)
    assert model == tmp_path / "onnx" / "model_quantized.onnx"


def test_missing_folder_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(ModelError, match="no-such-model"):
        OnnxCrossEncoder(missing)


def test_missing_model_file(tmp_path: Path) -> None:
    shutil.copyfile(bert_tokenizer_json(), tmp_path / "tokenizer.json")
    with pytest.raises(ModelError, match="no ONNX model") as info:
        find_cross_encoder_files(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_missing_tokenizer(tmp_path: Path) -> None:
    build_test_cross_encoder(tmp_path)
    (tmp_path / "tokenizer.json").unlink()
    with pytest.raises(ModelError, match=r"no tokenizer\.json") as info:
        OnnxCrossEncoder(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_corrupt_model_raises_model_error(tmp_path: Path) -> None:
    build_test_cross_encoder(tmp_path)
    (tmp_path / "onnx" / "model.onnx").write_bytes(b"not an onnx graph")
    with pytest.raises(ModelError, match="cannot load"):
        OnnxCrossEncoder(tmp_path)


def test_corrupt_tokenizer_raises_model_error(tmp_path: Path) -> None:
    build_test_cross_encoder(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{")
    with pytest.raises(ModelError, match="cannot load tokenizer"):
        OnnxCrossEncoder(tmp_path)
