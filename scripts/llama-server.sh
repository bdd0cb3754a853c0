#!/usr/bin/env bash
# llama.cpp's own server, with parallel slots, for `eval --jobs N` against a
# real model: llama-cpp-python's server (scripts/local-model.sh) answers one
# request at a time, llama-server batches N.
#   scripts/llama-server.sh build              # from llama-cpp-python's sdist (PyPI), ~15 min on 2 cores
#   scripts/llama-server.sh start [0.5b|1.5b] [SLOTS]   # prints the [models.local] config
#     (restarted if running with other SLOTS; with 2 or more, a commented
#     `slots` line pins the actor and the evaluator to a slot each)
#   scripts/llama-server.sh stop [0.5b|1.5b]
# The weights are local-model.sh's (run `scripts/local-model.sh setup SIZE` first).
set -euo pipefail
cmd=${1:-start}
size=${2:-0.5b}
slots=${3:-4}
data=${SWITCHYARD_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/switchyard}
root="$data/local-model"
src="$root/llama-cpp-src"
bin="$src/build/bin/llama-server"
case "$size" in
  0.5b) name=qwen2.5-coder-0.5b-instruct ;;
  1.5b) name=qwen2.5-coder-1.5b-instruct ;;
  *) echo "llama-server: unknown model size '$size' (0.5b or 1.5b)" >&2; exit 2 ;;
esac
gguf="$root/models/$name-q4_k_m.gguf"
pidfile="$root/$name.llama-server.pid"
portfile="$root/$name.llama-server.port"
slotsfile="$root/$name.llama-server.slots"
log="$root/$name.llama-server.log"
say() { echo "llama-server: $*" >&2; }

# The same pinned source and portable flags as local-model.sh's server; the
# key (version and flags) is recorded beside the binary and a mismatch rebuilds.
version=0.3.36
here=$(cd "$(dirname "$0")" && pwd)
cmake_args() { echo "${SWITCHYARD_LLAMA_CMAKE_ARGS:-$(cat "$here/local-model/cmake-args")}"; }
key() { echo "llama-cpp-python==$version CMAKE_ARGS=$(cmake_args)"; }

build() {
  [ -x "$bin" ] && [ "$(cat "$src/switchyard.key" 2>/dev/null)" = "$(key)" ] && return
  command -v cmake >/dev/null 2>&1 || {
    say "installing cmake (apt)"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake >/dev/null
  }
  mkdir -p "$root/sdist"
  say "fetching llama-cpp-python $version's source distribution (it vendors llama.cpp)"
  # --no-binary for this package only: its dependencies' wheels are not built.
  python3 -m pip download -q --no-deps --no-binary llama-cpp-python -d "$root/sdist" "llama-cpp-python==$version"
  local tarball="$root/sdist/llama_cpp_python-$version.tar.gz"
  rm -rf "$root/sdist/x" && mkdir -p "$root/sdist/x" && tar xzf "$tarball" -C "$root/sdist/x"
  rm -rf "$src" && mv "$root/sdist/x/llama_cpp_python-$version/vendor/llama.cpp" "$src"
  say "building llama-server (about 15 minutes cold on 2 cores; flags: $(cmake_args))"
  # shellcheck disable=SC2046
  cmake -S "$src" -B "$src/build" -DLLAMA_BUILD_SERVER=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DCMAKE_BUILD_TYPE=Release $(cmake_args) >/dev/null
  cmake --build "$src/build" --target llama-server -j "$(nproc)" >/dev/null
  key > "$src/switchyard.key"
}

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

start() {
  build
  [ -f "$gguf" ] || { say "no weights at $gguf: run scripts/local-model.sh setup $size"; exit 1; }
  if running && [ "$(cat "$slotsfile" 2>/dev/null)" != "$slots" ]; then
    say "restarting: running with $(cat "$slotsfile" 2>/dev/null || echo '?') slots, $slots asked"
    local old; old=$(cat "$pidfile"); kill "$old"; rm -f "$pidfile"
    while kill -0 "$old" 2>/dev/null; do sleep 0.2; done
  fi
  if ! running; then
    local port; port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    say "starting $name with $slots slots on 127.0.0.1:$port (log: $log)"
    # Each slot gets 4096 tokens of context, as local-model.sh's server has.
    nohup "$bin" -m "$gguf" --host 127.0.0.1 --port "$port" --parallel "$slots" -c $((4096 * slots)) \
      -t "$(nproc)" >"$log" 2>&1 &
    echo $! >"$pidfile"; echo "$port" >"$portfile"; echo "$slots" >"$slotsfile"
    for _ in $(seq 1 120); do
      curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
      running || { say "the server died; see $log"; exit 1; }
      sleep 0.5
    done
  fi
  cat <<CFG
[models.local]
kind = "openai"
base_url = "http://127.0.0.1:$(cat "$portfile")/v1"
model = "$name"
timeout_ms = 600000
native_tools = false
json_schema = true
cache_prompt = true
max_in_flight = $slots
price = { input_per_mtok = 0.0, output_per_mtok = 0.0 }
CFG
  # A slot caches one prompt: a slot per role keeps each role's cache its
  # own through a session (for one session at a time; not with eval --jobs).
  [ "$slots" -ge 2 ] && echo "# slots = { actor = 0, evaluator = 1 }"
  return 0
}

case "$cmd" in
  build) build ;;
  start) start ;;
  stop) if running; then kill "$(cat "$pidfile")"; rm -f "$pidfile"; say "stopped"; fi ;;
  *) echo "usage: $0 build|start|stop [0.5b|1.5b] [SLOTS]" >&2; exit 2 ;;
esac
