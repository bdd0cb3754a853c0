#!/usr/bin/env bash
# What a viewer that stopped reading costs a long session: a headless run of
# COUNT sample tasks (simulated model) with a viewer that connects to its
# socket, asks for every event from the first, and never reads a line.
# Prints the run's peak RSS, its events and how long it took.
#
#   scripts/viewer-memory.sh [COUNT] [BIN]     (default 6000 tasks, target/release/switchyard)
#
# The endpoint keeps a window of the latest events in memory and the older
# ones in a file of its own, so the peak stays where it is as COUNT grows
# (docs/src/performance.md, "Viewers from another process").
set -euo pipefail

count=${1:-6000}
bin=${2:-target/release/switchyard}
[ -x "$bin" ] || { echo "viewer-memory: no $bin (cargo build --release)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'kill "${viewer:-0}" 2>/dev/null || true; rm -rf "$dir"' EXIT
started=$SECONDS
/usr/bin/time -f "%M" -o "$dir/peak" "$bin" --data-dir "$dir" run --count "$count" --seed 3 \
  --trace "$dir/trace.jsonl" >/dev/null 2>"$dir/err" &
run=$!
sock=
for _ in $(seq 200); do
  sock=$(ls "$dir"/sessions/*.sock 2>/dev/null | head -1 || true)
  [ -n "$sock" ] && break
  sleep 0.05
done
[ -n "$sock" ] || { echo "viewer-memory: the run never opened its socket" >&2; cat "$dir/err" >&2; exit 1; }
python3 - "$sock" <<'PY' &
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
hello = {"type": "hello", "v": 1, "viewer": "stuck", "follow": 0, "attach": True}
s.sendall((json.dumps(hello) + "\n").encode())
time.sleep(3600)
PY
viewer=$!
wait "$run"
echo "$count tasks, $(wc -l <"$dir/trace.jsonl") events, $((SECONDS - started)) s, peak RSS $(( $(cat "$dir/peak") / 1024 )) MB"
