#!/usr/bin/env bash
# Switchyard's strategies and a peer agent on the same real model, tasks and
# tools, side by side: what a user waits for with each.
#
#   scripts/peer-side-by-side.sh [--server llama-server|local-model] [--model 0.5b|1.5b]
#                                [--count N] [--tasks FILE] [--strategies LIST] [--out DIR]
#
# - The model: the local Qwen2.5-Coder 0.5B (or 1.5B with --model 1.5b), served by llama.cpp's own
#   server with two slots, the actor and the evaluator pinned to one each
#   (scripts/llama-server.sh, the default: it reports
#   the prompt cache and takes `cache_prompt`) or by llama-cpp-python's
#   (scripts/local-model.sh, which reports no cache). Started when not running.
# - The peer: LangGraph's prebuilt ReAct agent (create_react_agent over
#   langchain-openai's ChatOpenAI, pinned by scripts/agent-clients.sh),
#   tests/agents/langgraph_agent.py --mcp. It runs under `switchyard eval
#   --agent`: its model calls go through Switchyard's gateway to the same
#   server, its tools are Switchyard's sample library over MCP, and its
#   answers are judged as the strategies' are.
# - The same settings on both sides: temperature 0, at most 256 tokens a
#   reply (the actor's cap), at most 8 steps (LangGraph: recursion limit 17,
#   a step being its agent and tools nodes), the same tasks in the same order.
# - Switchyard: `eval --strategy react,toolnet` (by default) over the tasks.
#
# Writes DIR/switchyard, DIR/langgraph (each an eval folder) and DIR/merged
# (both: report.md with the main table and "Time and tokens", speed.png,
# overview.png), and prints the merged tables. Default: 6 sample tasks into
# $SWITCHYARD_DATA_DIR/peer-side-by-side. Uses $SWITCHYARD_BIN when set,
# else target/release/switchyard, else target/debug/switchyard.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
server=llama-server
size=0.5b
count=6
tasks="$here/sample-tools/tasks/sample.toml"
strategies=react,toolnet
data=${SWITCHYARD_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/switchyard}
out="$data/peer-side-by-side"
while [ $# -gt 0 ]; do
  case "$1" in
    --server) server=${2:?--server needs llama-server or local-model}; shift 2 ;;
    --model) size=${2:?--model needs 0.5b or 1.5b}; shift 2 ;;
    --count) count=${2:?--count needs a number}; shift 2 ;;
    --tasks) tasks=${2:?--tasks needs a file}; shift 2 ;;
    --strategies) strategies=${2:?--strategies needs a list}; shift 2 ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "peer-side-by-side: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
say() { echo "peer-side-by-side: $*" >&2; }

bin=${SWITCHYARD_BIN:-}
if [ -z "$bin" ]; then
  for b in "$here/target/release/switchyard" "$here/target/debug/switchyard"; do
    [ -x "$b" ] && { bin=$b; break; }
  done
fi
[ -n "$bin" ] && [ -x "$bin" ] || { say "no switchyard binary: cargo build --release, or set SWITCHYARD_BIN"; exit 2; }
[ -f "$tasks" ] || { say "no task file $tasks"; exit 2; }

case "$server" in
  # Two slots, the actor and the evaluator pinned to one each: each role's
  # prompt then extends its own last one in the server's cache.
  llama-server) model_config=$(bash "$here/scripts/llama-server.sh" start "$size" 2 | sed 's/^# slots = /slots = /') ;;
  local-model) model_config=$(bash "$here/scripts/local-model.sh" start "$size" | sed '/^#/d') ;;
  *) say "unknown server '$server' (llama-server or local-model)"; exit 2 ;;
esac
bash "$here/scripts/agent-clients.sh" install >&2
eval "$(bash "$here/scripts/agent-clients.sh" env)"

rm -rf "$out/switchyard" "$out/langgraph" "$out/merged"
mkdir -p "$out"
config="$out/config.toml"
{
  echo "$model_config"
  printf '\n[roles]\n'
  for role in actor planner solver evaluator classifier judge; do echo "$role = \"local\""; done
} >"$config"

say "$server with Qwen $size, $count tasks of $tasks; Switchyard: $strategies"
started=$SECONDS
"$bin" --config "$config" eval --strategy "$strategies" --tasks "$tasks" --count "$count" \
  --out "$out/switchyard" --json >/dev/null
say "Switchyard's strategies took $((SECONDS - started)) s"
started=$SECONDS
"$bin" --config "$config" eval --tasks "$tasks" --count "$count" --label langgraph \
  --out "$out/langgraph" --json --agent -- \
  "$SWITCHYARD_AGENT_PYTHON" "$SWITCHYARD_AGENT_CLIENTS/langgraph_agent.py" --mcp \
  --max-tokens 256 --recursion-limit 17 --timeout 600 --max-retries 0 "{task}" >/dev/null
say "LangGraph took $((SECONDS - started)) s"
"$bin" report "$out/switchyard" "$out/langgraph" --out "$out/merged"
