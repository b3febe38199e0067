#!/usr/bin/env bash
# The GPU checks of issue 43, for the device machine (an H100 or H200; 16 cores; no network), from
# the repository root, after bench/gpu_prepare.sh here. Two calls, the second at once after the
# first, while the machine is still warm (30 s) and keeps what the first built (.gpu/site):
#
#   call 1, carry [".gpu"], timeout 420:    bash bench/gpu_device.sh build
#     records the toolchain (compiler flags in the environment, where the C++ runtime is, what a
#     one-function library links against), builds llama-cpp-python 0.3.36 from the trimmed sdist
#     with CUDA for sm_90 only and the shared C++ runtime named on every link line (16 jobs, no
#     llava: 252 s), checks no library carries its own runtime, writes a GGUF of Qwen2.5-1.5B's
#     real shape with random f16 weights (3.6 GB, 35 s, bench/random_gguf.py), loads it in children
#     (numpy first, with GPU and CPU layers; llama.cpp first and then pyarrow; raggity's probe after
#     numpy) with the loader's library order recorded, takes a cuda-gdb backtrace of a child that
#     crashes, and runs bench/gpu.py (CPU and GPU rows). About 300 s.
#   call 2, carry [".gpu-a"], right after:  bash bench/gpu_device.sh ask
#     `rag status`, two `rag ask` and `rag doctor` end to end on an index of docs/ built here. The
#     pylance wheel (85 MB) is over what the first call can carry beside the sdist, so it travels
#     alone, as its contents in tar.xz.
#
# Run on an H200 on 27 Nov 2026: bench/results/gpu_h200_27nov/ (its README says which version of this
# script gave which file). Everything to keep is written under $OUT (8 files at most): gpu.txt,
# toolchain.txt, probes.txt, order.txt, links.txt, backtrace.txt, bench.jsonl, build.log (its
# tail); ask.txt from call 2.
set -uo pipefail
stage=${1:-build}
export PYTHONUNBUFFERED=1
PY=${PY:-python3}  # the image's Python 3.12, with numpy 2.5.2 (scipy-openblas 0.3.34) as in the issue
SITE="$PWD/.gpu/site"
OUT=${OUT:-/tmp/gpu-out}
GGUF=/tmp/qwen2.5-1.5b-random.gguf
# For a rehearsal on a CPU machine: SKIP_BUILD=1 uses the installed llama-cpp-python, SHAPE=tiny a
# small model, PY the project's Python, TOKENIZER another tokenizer dump.
SHAPE=${SHAPE:-qwen2.5-1.5b}
TOKENIZER=${TOKENIZER:-.gpu/qwen2.5-tokenizer.json}
mkdir -p "$OUT" "$SITE"
export PYTHONPATH="$SITE:$PWD"

note() { echo "== $*" | tee -a "$OUT/probes.txt"; }

# One load of the GGUF with every layer on the GPU, in a child; its exit status (a negative one is
# the signal that ended it) and the order the loader initialised the libraries that matter.
probe() {
  local name=$1 && shift
  LD_DEBUG=files LD_DEBUG_OUTPUT="/tmp/ld-$name" timeout 300 "$@" >"/tmp/probe-$name.out" 2>&1
  local rc=$?
  ((rc > 128)) && rc="-$((rc - 128)) (signal $(kill -l $((rc - 128)) 2>/dev/null))"
  note "$name: exit $rc; $(tail -c 300 "/tmp/probe-$name.out" | tr '\n' ' ')"
  { echo "-- $name"; cat /tmp/ld-"$name".* 2>/dev/null | grep "calling init" |
      grep -E "llama|ggml|gomp|cuda|cublas|openblas|gfortran|stdc" | sed 's/.*calling init: //'; } >>"$OUT/order.txt"
}

build() {
  { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    grep -m1 "model name" /proc/cpuinfo; grep -c processor /proc/cpuinfo
    grep -q amx_int8 /proc/cpuinfo && echo "cpu has AMX" || echo "cpu has no AMX"
    $PY -c "import sys, numpy; print(sys.version.split()[0], 'numpy', numpy.__version__); numpy.show_config()" 2>&1 |
      grep -E "^3\.|openblas configuration|version:" | head -4
    ldd --version | head -1; nvcc --version | tail -1; } >"$OUT/gpu.txt" 2>&1
  if [[ -z ${SKIP_BUILD:-} ]]; then
    $PY -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .gpu/*.whl || exit 1
    compile
  fi
  models_and_probes
}

# Why a build links libstdc++ statically: the flags in the environment, whether the compiler finds the
# shared runtime's development link (libstdc++.so), and what a one-function C++ library links against,
# as the toolchain builds it and with the fix below.
toolchain() {
  local so
  so=$(g++ -print-file-name=libstdc++.so.6)
  [[ $so == /* ]] || so=/lib/x86_64-linux-gnu/libstdc++.so.6  # the compiler did not find it by name
  printf '#include <sstream>\nextern "C" long f(long v) { std::ostringstream o; o << v; return (long)o.str().size(); }\n' >/tmp/f.cpp
  { env | grep -E '^(C|CXX|LD|CPP|CUDA|NVCC)?FLAGS=|^(CC|CXX|CUDAHOSTCXX|CMAKE_[A-Z_]*)=' || echo "(no compiler or linker flags in the environment)"
    g++ --version | head -1; cmake --version | head -1
    echo "libstdc++.so: $(g++ -print-file-name=libstdc++.so)"; echo "libstdc++.a: $(g++ -print-file-name=libstdc++.a)"
    echo "libstdc++.so.6: $so"
    g++ -fPIC -shared /tmp/f.cpp -o /tmp/f.so && echo "as built: $(ldd /tmp/f.so | grep -c 'libstdc++') shared runtime, $(nm -D --defined-only /tmp/f.so | grep -c _ZNSt6locale) runtime locale symbols"
    g++ -fPIC -shared /tmp/f.cpp -o /tmp/f-fixed.so "$so" && echo "with the fix: $(ldd /tmp/f-fixed.so | grep -c 'libstdc++') shared runtime, $(nm -D --defined-only /tmp/f-fixed.so | grep -c _ZNSt6locale) runtime locale symbols"
    g++ -fPIC -shared /tmp/f.cpp -o /tmp/f.so -Wl,-t 2>&1 | grep -i stdc
    if [[ -n ${CXX:-} ]]; then  # the compiler CMake uses
      "$CXX" -fPIC -shared /tmp/f.cpp -o /tmp/f-cxx.so && echo "as \$CXX ($CXX) builds it: $(ldd /tmp/f-cxx.so | grep -c 'libstdc++') shared runtime, $(nm -D --defined-only /tmp/f-cxx.so | grep -c _ZNSt6locale) runtime locale symbols"
    fi
    $PY -c "from pathlib import Path; from raggity.inference.llama_runtime import private_cxx_runtime as p; print('checker, toolchain build:', p(Path('/tmp/f.so')), '; fixed:', p(Path('/tmp/f-fixed.so')))"
  } >"$OUT/toolchain.txt" 2>&1
}

compile() {
  toolchain
  # The fix (docs/models.md): the shared C++ runtime named on every link line, so that no llama.cpp
  # library carries a copy of its own.
  local so
  so=$(g++ -print-file-name=libstdc++.so.6)
  [[ $so == /* ]] || so=/lib/x86_64-linux-gnu/libstdc++.so.6  # the compiler did not find it by name
  local runtime="-DCMAKE_CXX_STANDARD_LIBRARIES=$so -DCMAKE_CUDA_STANDARD_LIBRARIES=$so"
  # PLAIN_BUILD=1: the build without the fix, to see raggity's check name the library that carries
  # a copy (a build of the 27 Nov kind; not yet run with the check).
  [[ -n ${PLAIN_BUILD:-} ]] && runtime=""
  note "build: llama-cpp-python 0.3.36, CUDA sm_90, 16 jobs, runtime flags: ${runtime:-none}"
  local began=$SECONDS
  CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAVA_BUILD=OFF $runtime" \
    CMAKE_BUILD_PARALLEL_LEVEL=16 $PY -m pip install -v --no-index --no-deps --no-build-isolation --no-compile \
    --target "$SITE" .gpu/llama_cpp_python-0.3.36-trimmed.tar.gz >/tmp/build.log 2>&1
  local rc=$?
  tail -n 100 /tmp/build.log >"$OUT/build.log"
  grep -E "Linking|-shared " /tmp/build.log | tail -n 14 | cut -c1-3000 >"$OUT/links.txt"
  note "build exit $rc in $((SECONDS - began)) s; $(ls "$SITE/llama_cpp/lib" 2>/dev/null | tr '\n' ' ')"
  ((rc == 0)) || exit 1
  note "private C++ runtime: $($PY -c "from raggity.inference.llama_runtime import native_library, private_cxx_runtime as p; print(p(native_library()))")"
}

models_and_probes() {
  local began=$SECONDS
  $PY -m bench.random_gguf make "$GGUF" --tokenizer "$TOKENIZER" --shape "$SHAPE" | tee -a "$OUT/probes.txt"
  note "model written in $((SECONDS - began)) s"

  local load="import llama_cpp; llama_cpp.Llama(model_path='$GGUF', n_gpu_layers=-1, n_ctx=2048, verbose=False); print('loaded')"
  local cpu_load=${load/n_gpu_layers=-1/n_gpu_layers=0}
  local openblas
  openblas=$($PY -c "import numpy, pathlib; print(next(pathlib.Path(numpy.__file__).parent.parent.glob('numpy.libs/libscipy_openblas*.so')))" 2>/dev/null)
  local gomp
  gomp=$(ldd "$SITE/llama_cpp/lib/libggml-cpu.so" 2>/dev/null | awk '/libgomp/ {print $3}')
  { echo "-- ldd"; for lib in "$SITE"/llama_cpp/lib/*.so; do echo "$(basename "$lib"): $(ldd "$lib" | awk '{print $1}' | tr '\n' ' ')"; done
    echo "numpy's OpenBLAS: $openblas; llama.cpp's libgomp: $gomp"; } >>"$OUT/order.txt"
  probe numpy-first "$PY" -c "import numpy; $load"
  probe numpy-first-cpu-layers "$PY" -c "import numpy; $cpu_load"
  probe llama-first-then-pyarrow "$PY" -c "$load; import pyarrow; print(pyarrow.array(['', 'x']).to_pylist())"
  probe raggity-probe-after-numpy "$PY" -c "import numpy, pyarrow, runpy, sys
sys.argv = ['probe', '$GGUF', '--gpu-layers', '-1']
runpy.run_module('raggity.inference.generator_probe', run_name='__main__')"
  if grep -q "numpy-first: exit -" "$OUT/probes.txt"; then
    timeout 100 cuda-gdb -q -batch -ex "set pagination off" -ex run -ex "bt 40" -ex "info threads" \
      -ex "info sharedlibrary" --args "$PY" -c "import numpy; $load" >"$OUT/backtrace.txt" 2>&1
    note "cuda-gdb exit $?"
  fi
  note "bench/gpu.py: 2,000-token prompt, 64 pieces decoded"
  $PY -m bench.gpu --gguf "$GGUF" --prompt-tokens 2000 --decode 64 --threads 16 | tee "$OUT/bench.jsonl"
}

ask() {
  (cd "$SITE" && xz -dc -T16 "$OLDPWD/.gpu-a/pylance.tar.xz" | tar xf -) || exit 1
  export PYTHONPATH="$SITE:$PWD/.gpu/embedder:$PWD"
  local rag=("$PY" -m raggity.cli.main --config .gpu/raggity.toml)
  {
    "${rag[@]}" status
    for question in "How do I run raggity's generator on a GPU?" "What does rag doctor check?"; do
      echo "-- rag ask: $question"
      local began=$SECONDS
      "${rag[@]}" ask --trace --no-cache "$question" 2>/tmp/ask.err
      echo "exit $? after $((SECONDS - began)) s"; tail -5 /tmp/ask.err
    done
    "${rag[@]}" doctor
  } >"$OUT/ask.txt" 2>&1
  tail -n 60 "$OUT/ask.txt"
}

"$stage"
