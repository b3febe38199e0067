"""Models from Ollama's store, laid out as Ollama lays them out (manifests naming sha256 blobs), with
the real packaged SmolLM2 GGUF as the model layer; and the store's hostile cases, each a one-line
error."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from raggity.config.schema import GenerationConfig
from raggity.core.errors import ModelError
from raggity.inference.generator import LlamaGenerator
from raggity.models import ollama
from raggity.models.registry import check_generator_name, resolve_generator
from tests.support import assert_clean_error, rag

SMALL = "smollm2-135m-instruct"


def _real_gguf() -> Path:
    return resolve_generator(GenerationConfig(model=SMALL), Path(".")).gguf


def _place(source: Path, target: Path) -> None:
    """A hard link where the file system allows one (98 MB), else a copy: a real file either way."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def lay_out(
    store: Path, gguf: Path, name: str = "smollm2", tag: str = "135m", *, digest: str | None = None
) -> Path:
    """Writes `name:tag` into `store` as Ollama does: the GGUF as blobs/sha256-<its hash>, a config
    layer, and a manifest that lists both. Returns the blob."""
    digest = digest or _sha256(gguf)
    blob = store / "blobs" / f"sha256-{digest}"
    if not blob.exists():
        _place(gguf, blob)
    config = b'{"model_format":"gguf","model_family":"llama"}'
    config_digest = hashlib.sha256(config).hexdigest()
    (store / "blobs" / f"sha256-{config_digest}").write_bytes(config)
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {
            "mediaType": "application/vnd.docker.container.image.v1+json",
            "digest": f"sha256:{config_digest}",
            "size": len(config),
        },
        "layers": [
            {"mediaType": ollama.MODEL_LAYER, "digest": f"sha256:{digest}", "size": gguf.stat().st_size},
            {
                "mediaType": "application/vnd.ollama.image.template",
                "digest": f"sha256:{config_digest}",
                "size": 1,
            },
        ],
    }
    path = store / "manifests" / "registry.ollama.ai" / "library" / name / tag
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return blob


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ollama") / "models"
    lay_out(root, _real_gguf())
    return root


@pytest.fixture
def in_store(store: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OLLAMA_MODELS", str(store))
    return store


def test_an_ollama_model_resolves_to_its_blob_and_runs(in_store: Path) -> None:
    found = resolve_generator(GenerationConfig(model="ollama:smollm2:135m"), Path("."))
    digest = _sha256(_real_gguf())
    assert found.gguf == in_store / "blobs" / f"sha256-{digest}"
    assert found.identity == f"ollama:smollm2:135m:{digest[:16]}"
    generator = LlamaGenerator(found.gguf, identity=found.identity, threads=1, context_size=512)
    assert "".join(generator.stream([{"role": "user", "content": "Hi"}], max_tokens=3, temperature=0.0))


def test_names_take_ollamas_forms(in_store: Path) -> None:
    assert ollama.parse_ref("ollama:qwen2.5").tag == "latest"
    ref = ollama.parse_ref("ollama:someone/model:q4")
    assert (ref.namespace, ref.model, ref.tag, ref.name) == ("someone", "model", "q4", "someone/model:q4")
    for bad in ("ollama:../../etc:passwd", "ollama:a/b/c/d:e", "ollama::x", "ollama:x:..", "ollama:/abs:x"):
        with pytest.raises(ModelError, match="not an Ollama model name"):
            ollama.parse_ref(bad)


def test_a_model_not_in_the_store_names_the_pull(in_store: Path) -> None:
    with pytest.raises(ModelError) as raised:
        check_generator_name("ollama:qwen2.5:7b")
    assert "qwen2.5:7b is not in Ollama's store" in raised.value.message
    assert "ollama pull qwen2.5:7b" in raised.value.hint


def _broken_store(tmp_path: Path) -> Path:
    store = tmp_path / "models"
    lay_out(store, _real_gguf())
    return store


def _error(store: Path, name: str = "ollama:smollm2:135m") -> ModelError:
    with pytest.raises(ModelError) as raised:
        ollama.find_model(name, store)
    assert "\n" not in raised.value.message
    return raised.value


def test_a_missing_blob(tmp_path: Path) -> None:
    store = tmp_path / "models"
    lay_out(store, _real_gguf()).unlink()
    assert "is missing from Ollama's store" in _error(store).message


def test_a_manifest_that_is_not_json(tmp_path: Path) -> None:
    store = _broken_store(tmp_path)
    manifest = store / "manifests/registry.ollama.ai/library/smollm2/135m"
    manifest.write_text("{not json", encoding="utf-8")
    assert _error(store).message == f"{manifest}: not an Ollama manifest (JSONDecodeError)"


def test_a_blob_whose_bytes_do_not_match_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "models"
    # A real GGUF filed under another file's digest: the name promises bytes the file does not hold.
    lay_out(store, _real_gguf(), digest=hashlib.sha256(b"another model").hexdigest())
    monkeypatch.setenv("OLLAMA_MODELS", str(store))
    with pytest.raises(ModelError) as raised:
        resolve_generator(GenerationConfig(model="ollama:smollm2:135m"), Path("."))
    assert "SHA-256 mismatch" in raised.value.message
    assert "ollama pull smollm2:135m" in raised.value.hint


def test_a_blob_that_links_outside_the_store(tmp_path: Path) -> None:
    store = tmp_path / "models"
    outside = tmp_path / "elsewhere.gguf"
    outside.write_bytes(b"GGUF" + b"\0" * 64)
    digest = _sha256(outside)
    lay_out(store, outside, digest=digest)
    blob = store / "blobs" / f"sha256-{digest}"
    blob.unlink()
    blob.symlink_to(outside)
    assert "resolves outside Ollama's store" in _error(store).message


def test_a_manifest_that_links_outside_the_store(tmp_path: Path) -> None:
    store = _broken_store(tmp_path)
    manifest = store / "manifests/registry.ollama.ai/library/smollm2/135m"
    outside = tmp_path / "manifest.json"
    outside.write_text(manifest.read_text(encoding="utf-8"), encoding="utf-8")
    manifest.unlink()
    manifest.symlink_to(outside)
    assert "resolves outside Ollama's store" in _error(store).message


def test_a_model_layer_that_is_not_a_gguf(tmp_path: Path) -> None:
    store = tmp_path / "models"
    text = tmp_path / "weights.bin"
    text.write_bytes(b"PK\x03\x04 not a gguf")
    lay_out(store, text)
    assert "not a GGUF file" in _error(store).message


def test_the_cli_lists_ollama_models_and_says_they_are_uncalibrated(in_store: Path, tmp_path: Path) -> None:
    done = rag("models", "list", "--json", cwd=tmp_path, env={**os.environ, "OLLAMA_MODELS": str(in_store)})
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    row = rows["ollama:smollm2:135m"]
    assert row["source"] == "ollama"
    assert row["present"] is True
    assert row["sha256"] == _sha256(_real_gguf())
    assert row["calibration"].startswith("uncalibrated: run `rag calibrate --model ollama:smollm2:135m`")


def test_the_cli_error_for_a_missing_ollama_model_is_one_line(in_store: Path, tmp_path: Path) -> None:
    done = rag(
        "ask",
        "What is this?",
        "--model",
        "ollama:nothere:1b",
        cwd=tmp_path,
        env={**os.environ, "OLLAMA_MODELS": str(in_store)},
    )
    assert done.returncode != 0
    assert "nothere:1b is not in Ollama's store" in assert_clean_error(done.stderr)
