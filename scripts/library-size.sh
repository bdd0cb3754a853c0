#!/usr/bin/env bash
# Big libraries: each strategy over a generated function library of N tools
# without trajectories (one OpenAI function file, a command executor), as a
# new user's config of their own library would be. For each size and
# strategy, the wall time and peak RSS of
#   - `run --count 1 --task "Fetch the invoice record 5"` (load, set-up and
#     the first task, headless), and
#   - `ui`, from its start to its first frame (SWITCHYARD_FRAME_LOG, in tmux
#     at 160x48), its peak RSS up to the `q` sent then.
#   scripts/library-size.sh [N ...]        (default: 1836 16000 100000)
# SWITCHYARD names the binary (default target/release/switchyard: build it
# first with cargo build --release). A run that fails prints its error.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
sy=${SWITCHYARD:-$here/target/release/switchyard}
[ -x "$sy" ] || { echo "library-size: build first (cargo build --release) or set SWITCHYARD" >&2; exit 2; }
command -v tmux >/dev/null || { echo "library-size: needs tmux for the workbench's first frame" >&2; exit 2; }
command -v python3 >/dev/null || { echo "library-size: needs python3 to write the library" >&2; exit 2; }
[ $# -gt 0 ] || set -- 1836 16000 100000
work=$(mktemp -d "${TMPDIR:-/tmp}/library-size.XXXXXX")
session=sy-library-size-$$
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$work"' EXIT

# write N: the function file, the command tool and the config.
write() {
  python3 - "$1" "$work" <<'EOF'
import json, sys
n, work = int(sys.argv[1]), sys.argv[2]
verbs = ["fetch", "list", "create", "update", "archive", "search", "export", "sync", "audit", "rank", "merge", "tag"]
nouns = ["invoice", "ticket", "shipment", "ledger", "playlist", "warehouse", "badge", "contract", "sensor",
         "coupon", "recipe", "vehicle", "policy", "campaign", "webhook", "parcel"]
fns = []
for i in range(n):
    verb, noun = verbs[i % len(verbs)], nouns[(i // len(verbs)) % len(nouns)]
    fns.append({"type": "function", "function": {
        "name": f"{verb}_{noun}_{i}",
        "description": f"{verb.capitalize()} the {noun} record {i} by id",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}})
with open(f"{work}/functions.json", "w") as f:
    json.dump(fns, f)
with open(f"{work}/tool.py", "w") as f:
    f.write('import json\nprint(json.dumps({"result": "ok"}))\n')
with open(f"{work}/library.toml", "w") as f:
    f.write('library = ["functions.json"]\n[[library_options]]\npath = "functions.json"\n'
            'executor = { kind = "command", argv = ["python3", "tool.py"] }\n')
EOF
}

# seconds since $1 (date +%s.%N)
since() { python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.2f}')" "$1"; }

printf '%8s  %-8s  %8s  %8s  %8s  %8s\n' tools strategy "run s" "run MB" "ui s" "ui MB"
for n in "$@"; do
  write "$n"
  cfg=$work/library.toml
  for strategy in react rewoo atc toolnet; do
    rm -rf "$work/data"
    run_s=failed run_mb=-
    if (cd "$work" && /usr/bin/time -f '%e %M' -o "$work/run.time" "$sy" --config "$cfg" --data-dir "$work/data" \
        run --strategy "$strategy" --count 1 --no-save --task "Fetch the invoice record 5" >/dev/null 2>"$work/run.err"); then
      read -r run_s run_kb <"$work/run.time"
      run_mb=$((run_kb / 1024))
    else
      echo "library-size: $n tools, $strategy, run: $(tail -n 3 "$work/run.err")" >&2
    fi
    rm -rf "$work/data" "$work/frames.log"
    ui_s=failed ui_mb=-
    start=$(date +%s.%N)
    tmux new-session -d -s "$session" -x 160 -y 48 -c "$work" \
      "SWITCHYARD_FRAME_LOG=$work/frames.log /usr/bin/time -f '%e %M' -o $work/ui.time $sy --config $cfg --data-dir $work/data ui --strategy $strategy --count 1 2>$work/ui.err"
    # The first frame, for up to 10 minutes.
    for _ in $(seq 1 12000); do
      [ -s "$work/frames.log" ] && break
      tmux has-session -t "$session" 2>/dev/null || break
      sleep 0.05
    done
    if [ -s "$work/frames.log" ]; then
      ui_s=$(since "$start")
      tmux send-keys -t "$session" q
    fi
    for _ in $(seq 1 600); do
      tmux has-session -t "$session" 2>/dev/null || break
      sleep 0.1
    done
    tmux kill-session -t "$session" 2>/dev/null || true
    if [ "$ui_s" != failed ] && [ -s "$work/ui.time" ]; then
      read -r _ ui_kb < <(tail -n 1 "$work/ui.time")
      ui_mb=$((ui_kb / 1024))
    elif [ -s "$work/ui.err" ]; then
      echo "library-size: $n tools, $strategy, ui: $(tail -n 3 "$work/ui.err")" >&2
    fi
    printf '%8s  %-8s  %8s  %8s  %8s  %8s\n' "$n" "$strategy" "$run_s" "$run_mb" "$ui_s" "$ui_mb"
  done
done
