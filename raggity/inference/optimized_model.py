"""ONNX Runtime's graph optimisations, done once per model and ONNX Runtime version, kept on disk.

Most of the embedder's set-up in a cold `rag search` was ONNX Runtime optimising the graph: the
packaged int8 MiniLM dequantises its weights with Cast and Mul nodes, which constant folding turns
into float weights (22M values) every time a session is created (0.37-0.46 s of a 0.45 s session
on 2 busy cores; 0.11-0.13 s from the saved model). The saved model is optimised to
ORT_ENABLE_EXTENDED, the last level with nothing specific to this CPU, so a cache folder shared by
machines stays valid; the session still asks for ORT_ENABLE_ALL, whose layout passes then run on
the loaded graph. Its float weights (4x the int8 file) are in a file beside the graph that ONNX
Runtime reads without parsing them as protobuf. The outputs are bit-identical to the original
model's (tests/inference/test_optimized_model.py).

Each entry is a folder written under a temporary name and renamed into place, so a reader sees a
whole entry or none; its name holds the model's SHA-256 and ONNX Runtime's version, so a changed
model or a new runtime gets a new entry, and an entry whose files do not have the sizes recorded
when it was written (truncated, replaced) is removed and written again. Writing an entry removes the
same model's entries for other ONNX Runtime versions or formats, so an upgrade leaves one copy (about
4x the model) rather than one per version ever installed; two installs of different runtimes sharing
one cache folder rewrite it in turn, which costs the optimisation, never a wrong result. Any failure
here only costs the optimisation: the caller loads the original model.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from raggity.models.registry import hash_cache

# Part of each entry's name: a change to how entries are written makes the old ones unused.
FORMAT = "v1"
GRAPH = "model.onnx"
WEIGHTS = "model.onnx.data"
SIZES = "sizes.json"


def optimized_model(ort: Any, model: Path, cache: Path) -> Path | None:
    """The optimised copy of `model` under `cache`, written on first use; None where it cannot be
    had (the model cannot be read or optimised, the cache folder is not writable)."""
    try:
        digest = hash_cache().digest(model)[:32]
        entry = cache / f"{digest}-ort{ort.__version__}-{FORMAT}"
        if _complete(entry):
            return entry / GRAPH
        _discard(entry)
        cache.mkdir(parents=True, exist_ok=True)
        written = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=cache))
    except OSError:
        return None
    try:
        _write(ort, model, written)
        os.rename(written, entry)
    except Exception:  # onnxruntime's own errors, a full disk, a rename lost to another process
        _discard(written)
        return entry / GRAPH if _complete(entry) else None
    for superseded in cache.glob(f"{digest}-ort*"):
        if superseded != entry:
            _discard(superseded)
    return entry / GRAPH


def discard(graph: Path) -> None:
    """Removes the entry holding `graph`, which ONNX Runtime could not load; the next session
    writes it again."""
    _discard(graph.parent)


def _write(ort: Any, model: Path, folder: Path) -> None:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(folder / GRAPH)
    options.add_session_config_entry("session.optimized_model_external_initializers_file_name", WEIGHTS)
    options.add_session_config_entry(
        "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
    )
    options.log_severity_level = 3
    ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
    sizes = {name: (folder / name).stat().st_size for name in (GRAPH, WEIGHTS)}
    (folder / SIZES).write_text(json.dumps(sizes), encoding="utf-8")
    # On disk before the rename: after a power cut, an entry of the right sizes holds its bytes.
    for name in (GRAPH, WEIGHTS, SIZES):
        with (folder / name).open("rb") as handle:
            os.fsync(handle.fileno())


def _complete(entry: Path) -> bool:
    """Whether `entry` holds both files at the sizes they were written with."""
    try:
        sizes = json.loads((entry / SIZES).read_text(encoding="utf-8"))
        return isinstance(sizes, dict) and all(
            sizes.get(name) == (entry / name).stat().st_size for name in (GRAPH, WEIGHTS)
        )
    except (OSError, ValueError):
        return False


def _discard(folder: Path) -> None:
    with contextlib.suppress(OSError):
        shutil.rmtree(folder)
