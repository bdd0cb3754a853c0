#!/usr/bin/env bash
# LangGraph and Switchyard's engine on the same loop, side by side:
# a fake instant chat model that calls the calculator on "2+2" once, then
# answers "4"; one builtin calculator tool.
#   scripts/langgraph-side-by-side.sh [--out FILE] [--seconds S]
#
# - LangGraph: scripts/langgraph_react.py, a ReAct graph (StateGraph: an agent
#   node, a ToolNode with the calculator, tools_condition's edge to tools or
#   END), run for about S seconds (5) after a warm-up, the median of 5
#   batches. langgraph is pip-installed, pinned, when missing, into a virtualenv in
#   $SWITCHYARD_DATA_DIR/langgraph/venv (default: the platform's data
#   directory, ~/.local/share/switchyard).
# - Switchyard: `cargo bench --bench engine_step` on `instant_model_2plus2`
#   (the same task, eight times in a session) and `instant_model` (the smoke
#   tasks, the figure on docs/src/performance.md), short warm-up and measurement; criterion's
#   median per iteration over the steps of an iteration (its Throughput),
#   from $CARGO_TARGET_DIR/criterion (default: target/).
# A step is one model call plus the tool call it asks for, if any, as the
# engine counts it; LangGraph's invocation (agent, tools, agent) is two such
# steps and three node steps. Prints the table and the ratio against the
# issue's goal (Switchyard ≥ 50× faster per model+tool step); --out FILE
# writes the table there too.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=
seconds=5
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a file}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "langgraph-side-by-side: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
data=${SWITCHYARD_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/switchyard}
venv="$data/langgraph/venv"
target=${CARGO_TARGET_DIR:-$here/target}
say() { echo "langgraph-side-by-side: $*" >&2; }

command -v python3 >/dev/null || { say "needs python3"; exit 2; }
# Keyed like the other installs: the pinned file's contents and the Python.
. "$here/scripts/lib/keyed-install.sh"
want=$(pins_key "$here/scripts/langgraph/requirements.txt")
if ! keyed "$venv.ok" "$want" || ! "$venv/bin/python" -c 'import langgraph.graph, langgraph.prebuilt' 2>/dev/null; then
  say "installing langgraph into $venv (pinned by scripts/langgraph/requirements.txt)"
  rm -rf "$venv" "$venv.ok"
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/scripts/langgraph/requirements.txt"
  echo "$want" > "$venv.ok"
fi
say "langgraph $("$venv/bin/python" -c 'from importlib.metadata import version; print(version("langgraph"))')"

say "LangGraph: about ${seconds} s"
lg=$("$venv/bin/python" "$here/scripts/langgraph_react.py" "$seconds" 5)

say "Switchyard: cargo bench --bench engine_step (instant_model_2plus2, instant_model)"
(cd "$here" && cargo bench --bench engine_step -- --warm-up-time 1 --measurement-time 3 \
  'engine_step/instant_model(_2plus2)?$' >&2)

# The median per step of a criterion benchmark, in µs, and its steps per
# iteration.
per_step() {
  python3 - "$target/criterion/engine_step/$1/new" <<'EOF'
import json, sys
d = sys.argv[1]
median_ns = json.load(open(f"{d}/estimates.json"))["median"]["point_estimate"]
steps = json.load(open(f"{d}/benchmark.json"))["throughput"]["Elements"]
print(f"{median_ns / steps / 1000:.2f} {steps}")
EOF
}
read -r sy_same sy_same_steps < <(per_step instant_model_2plus2)
read -r sy_smoke sy_smoke_steps < <(per_step instant_model)

table=$(python3 - "$lg" "$sy_same" "$sy_same_steps" "$sy_smoke" "$sy_smoke_steps" <<'EOF'
import json, sys
lg = json.loads(sys.argv[1])
same, same_steps, smoke, smoke_steps = float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
step = lg["us_per_model_tool_step"]
rows = [
    ("LangGraph %s, per node step" % lg["langgraph"], lg["us_per_node_step"],
     "%d nodes an invocation, %d invocations" % (lg["nodes_per_invocation"], lg["invocations"])),
    ("LangGraph, per model+tool step", step,
     "an invocation / its %d model calls" % lg["model_calls_per_invocation"]),
    ("Switchyard, per step, same task", same, "instant_model_2plus2: 8 tasks, %d steps" % same_steps),
    ("Switchyard, per step, smoke tasks", smoke, "instant_model: 8 tasks, %d steps" % smoke_steps),
]
print("| measure | µs | note |")
print("|---|---:|---|")
for name, us, note in rows:
    print(f"| {name} | {us:,.1f} | {note} |")
ratio = step / same
print()
print(f"ratio per model+tool step, same task: {ratio:.1f}x (goal >= 50x: {'met' if ratio >= 50 else 'not met'})")
print(f"against the smoke tasks' step: {step / smoke:.1f}x")
EOF
)
echo "$table"
if [ -n "$out" ]; then
  mkdir -p "$(dirname "$out")"
  {
    echo "# LangGraph vs Switchyard, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores"
    echo
    echo "$table"
  } >"$out"
  say "wrote $out"
fi
