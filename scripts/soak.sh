#!/usr/bin/env bash
# The soak: long sessions with the simulated model, their memory
# and trace size sampled, and a figure of both.
#   scripts/soak.sh [OUT] [SWITCHYARD_BINARY]
# OUT defaults to target/soak; the binary to target/release/switchyard (build
# it first: cargo build --release).
#
# - headless: `run --count $SOAK_TASKS` (10,000) over the sample library,
#   ToolNet, traced: once with --no-save, once saving the learnt graph after
#   every task. VmRSS (from /proc/PID/status) and the trace's size are
#   sampled every half second with the tasks finished so far (RunFinished
#   events in the trace): OUT/headless-{nosave,save}.csv, and a line per
#   session with the RSS at 1,000 and at the last task, the peak (VmHWM) and
#   the trace's bytes per task in each tenth of the session.
# - workbench: the workbench in tmux (160x48) for $SOAK_MINUTES (30) at pace 0
#   over a generated library of $SOAK_TOOLS (16,000) tools (the sample tools
#   and builtin ones), ToolNet, its tasks cycling ($SOAK_WB_COUNT, 100,000
#   tasks: `--count` makes every task up front, about 0.5 KB each, so a
#   count far beyond what 30 minutes run only costs memory). Every frame's
#   render time goes to OUT/frames.log (SWITCHYARD_FRAME_LOG, see
#   crates/ui/src/term.rs); VmRSS, runs and events every 5 s to OUT/workbench.csv;
#   frame times per 5 minutes in OUT/frames.txt.
# - the figure: OUT/soak.svg and OUT/soak.png.
# SOAK_PARTS picks the parts ("headless workbench plot" by default).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/target/soak}
sy=${2:-$here/target/release/switchyard}
tasks=${SOAK_TASKS:-10000}
minutes=${SOAK_MINUTES:-30}
wb_count=${SOAK_WB_COUNT:-100000}
tools=${SOAK_TOOLS:-16000}
parts=${SOAK_PARTS:-headless workbench plot}
[ -x "$sy" ] || { echo "soak: build first (cargo build --release) or give the binary" >&2; exit 2; }
command -v python3 >/dev/null || { echo "soak: needs python3 for its samplers" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

# sample_headless PID TRACE CSV: until PID exits, every 0.5 s.
sample_headless() {
  python3 - "$@" <<'EOF'
import os, sys, time
pid, trace, csv = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def status(key):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None
runs, offset, rest, start, hwm = 0, 0, b"", time.time(), 0
with open(csv, "w") as out:
    out.write("secs,tasks,rss_kb,trace_bytes\n")
    while True:
        rss = status("VmRSS")
        hwm = max(hwm, status("VmHWM") or 0)
        if rss is None:
            break
        try:
            with open(trace, "rb") as f:
                f.seek(offset)
                chunk = f.read()
            offset += len(chunk)
            text = rest + chunk
            cut = text.rfind(b"\n") + 1
            runs += text[:cut].count(b'"RunFinished"')
            rest = text[cut:]
        except OSError:
            pass
        out.write(f"{time.time() - start:.2f},{runs},{rss},{offset}\n")
        out.flush()
        time.sleep(0.5)
print(f"peak VmHWM {hwm / 1024:.1f} MB")
EOF
}

# Reads a headless CSV: RSS at 1,000 tasks and at the end, bytes per task.
report_headless() {
  python3 - "$@" <<'EOF'
import sys
label, csv = sys.argv[1], sys.argv[2]
rows = [tuple(float(v) for v in l.split(",")) for l in open(csv).read().split("\n")[1:] if l]
rows = [r for r in rows if r[1] > 0]
def at(n):
    hit = [r for r in rows if r[1] >= n]
    return f"{hit[0][2] / 1024:.1f} MB (at {int(hit[0][1])} tasks)" if hit else "n/a"
last = rows[-1]
print(f"{label}: {int(last[1])} tasks in {last[0]:.0f} s; RSS at 1,000 tasks {at(1000)}, at 5,000 {at(5000)}, "
      f"at the end {last[2] / 1024:.1f} MB; trace {last[3] / 1e6:.1f} MB, {last[3] / last[1]:.0f} bytes a task")
tenth = []
for k in range(10):
    lo, hi = last[1] * k / 10, last[1] * (k + 1) / 10
    a = min((r for r in rows if r[1] >= lo), key=lambda r: r[1], default=None)
    b = max((r for r in rows if r[1] <= hi), key=lambda r: r[1], default=None)
    if a and b and b[1] > a[1]:
        tenth.append(f"{(b[3] - a[3]) / (b[1] - a[1]):.0f}")
print(f"{label}: trace bytes a task, per tenth of the session: {' '.join(tenth)}")
EOF
}

headless() { # LABEL FLAGS...
  local label=$1; shift
  local data="$out/data-$label" trace="$out/headless-$label.jsonl"
  rm -rf "$data" "$trace"
  "$sy" --data-dir "$data" run --strategy toolnet --count "$tasks" --seed 1 --trace "$trace" "$@" \
    >"$out/headless-$label.txt" 2>&1 &
  local pid=$!
  sample_headless "$pid" "$trace" "$out/headless-$label.csv" | tee "$out/headless-$label.peak"
  wait "$pid" || true
  report_headless "$label" "$out/headless-$label.csv" | tee -a "$out/summary.txt"
  sed "s/^/$label: /" "$out/headless-$label.peak" >>"$out/summary.txt"
}

# A library of $tools tools: the sample tools and generated builtin ones.
library() {
  local dir="$out/lib$tools"
  rm -rf "$dir"
  mkdir -p "$dir/manifests"
  python3 - "$dir/manifests" "$((tools - 17))" <<'EOF'
import random, sys
dir, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(n)
verbs = "fetch list create update archive search export sync audit rank merge tag".split()
nouns = "invoice ticket shipment ledger playlist warehouse badge contract sensor coupon recipe vehicle policy campaign webhook parcel".split()
domains = "retail logistics billing fleet marketing support payroll facilities".split()
per = 2000
for f in range(0, n, per):
    with open(f"{dir}/gen_{f // per:02}.toml", "w") as out:
        for i in range(f, min(n, f + per)):
            verb, noun, other, domain = rng.choice(verbs), rng.choice(nouns), rng.choice(nouns), rng.choice(domains)
            out.write(f'[[tool]]\nname = "{verb}_{noun}_{i:05}"\n'
                      f'description = "{verb.capitalize()} {noun} records of the {domain} service; returns each {noun} with its {other} references, status and timestamps."\n'
                      'cost = 1\n[tool.parameters]\ntype = "object"\nrequired = ["id"]\n'
                      f'[tool.parameters.properties.id]\ntype = "string"\ndescription = "The {noun}\'s identifier in the {domain} system."\n'
                      '[tool.executor]\nkind = "builtin"\nfunction = "web_search"\n\n')
EOF
  printf 'library = [%s, "manifests"]\ndata_dir = "data"\npace_ms = 0\n' "\"$here/sample-tools\"" >"$dir/switchyard.toml"
  echo "$dir/switchyard.toml"
}

workbench() {
  local cfg session="soak-wb-$$" trace="$out/workbench.jsonl"
  cfg=$(library)
  rm -rf "$out/lib$tools/data" "$trace" "$out/frames.log"
  tmux new-session -d -s "$session" -x 160 -y 48 \
    "cd '$out' && exec env SWITCHYARD_FRAME_LOG='$out/frames.log' '$sy' --config '$cfg' ui --strategy toolnet \
     --pace 0 --count $wb_count --no-save --trace '$trace' 2>'$out/workbench.err'"
  sleep 1
  local pid
  pid=$(tmux display-message -p -t "$session" '#{pane_pid}')
  echo "workbench: pid $pid, tmux session $session, $minutes minutes" >&2
  python3 - "$pid" "$out/frames.log" "$trace" "$out/workbench.csv" "$minutes" <<'EOF'
import os, sys, time
pid, frames, trace, csv, minutes = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
def rss():
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
start = time.time()
with open(csv, "w") as out:
    out.write("secs,rss_kb,runs,events,trace_bytes\n")
    while time.time() - start < minutes * 60:
        r = rss()
        if r is None:
            print("workbench: the process ended early", file=sys.stderr)
            break
        runs = events = 0
        try:
            with open(frames, "rb") as f:
                f.seek(max(0, os.path.getsize(frames) - 300))
                last = f.read().strip().split(b"\n")[-1].split()
                events, runs = int(last[3]), int(last[4])
        except (OSError, IndexError, ValueError):
            pass
        size = os.path.getsize(trace) if os.path.exists(trace) else 0
        out.write(f"{time.time() - start:.1f},{r},{runs},{events},{size}\n")
        out.flush()
        time.sleep(5)
EOF
  tmux capture-pane -p -t "$session" >"$out/workbench-screen.txt" || true
  tmux send-keys -t "$session" q 2>/dev/null || true
  sleep 5
  tmux kill-session -t "$session" 2>/dev/null || true
  python3 - "$out/frames.log" "$out/workbench.csv" <<'EOF' | tee -a "$out/summary.txt" >"$out/frames.txt"
import sys
frames = [l.split() for l in open(sys.argv[1]) if l.strip()]
rows = [tuple(float(v) for v in l.split(",")) for l in open(sys.argv[2]).read().split("\n")[1:] if l]
def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))] if v else 0
print(f"workbench: {len(frames)} frames; render µs median/p99/max, draw µs median/p99, runs at the end, RSS, per 5 minutes:")
for k in range(0, 1 + int(float(frames[-1][0]) // 300) if frames else 0):
    part = [f for f in frames if k * 300 <= float(f[0]) < (k + 1) * 300]
    if not part:
        continue
    render, draw = [int(f[1]) for f in part], [int(f[2]) for f in part]
    mem = [r[1] for r in rows if k * 300 <= r[0] < (k + 1) * 300]
    print(f"  {k * 5:>3}-{k * 5 + 5:<3} min: {len(part):>6} frames, render {q(render, .5):>6} {q(render, .99):>6} {max(render):>7},"
          f" draw {q(draw, .5):>6} {q(draw, .99):>6}, runs {part[-1][4]:>6}, RSS {(mem[-1] if mem else 0) / 1024:.1f} MB,"
          f" backlog max {max(int(f[5]) for f in part)}")
if rows:
    print(f"workbench: RSS {rows[0][1] / 1024:.1f} MB at {rows[0][0]:.0f} s, {rows[-1][1] / 1024:.1f} MB at {rows[-1][0] / 60:.1f} min;"
          f" {int(rows[-1][2])} runs, trace {rows[-1][4] / 1e6:.1f} MB ({rows[-1][4] / max(rows[-1][2], 1):.0f} bytes a run)")
EOF
}

plot() {
  local args=(--out "$out")
  for l in nosave save; do
    [ -f "$out/headless-$l.csv" ] && args+=(--headless "$l=$out/headless-$l.csv")
  done
  [ -f "$out/workbench.csv" ] && args+=(--workbench "workbench, $tools tools, pace 0=$out/workbench.csv")
  "$sy" soak-plot "${args[@]}"
}

for part in $parts; do
  case $part in
    headless)
      headless nosave --no-save
      headless save
      ;;
    workbench) workbench ;;
    plot) plot ;;
    *) echo "soak: unknown part $part" >&2; exit 2 ;;
  esac
done
[ -f "$out/summary.txt" ] && cat "$out/summary.txt"
