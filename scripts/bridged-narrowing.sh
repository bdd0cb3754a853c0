#!/usr/bin/env bash
# An agent nobody here wrote (the OpenAI Agents SDK, tests/agents/openai_agents_mcp.py),
# its model calls and its tool calls both through Switchyard, over SimpleToolQuestions'
# 1,836 tools, with the tools its model sees narrowed off / graph / retrieval / both:
#   scripts/bridged-narrowing.sh [OUT] [TASKS] [K]
# OUT defaults to target/bridged-narrowing, TASKS to 8 (spread evenly over the test split),
# K (narrow_k) to 8. Needs the local model (scripts/local-model.sh start 0.5b, or
# SWITCHYARD_LOCAL_MODEL_URL), the agent clients (scripts/agent-clients.sh install), a
# release build, and the dataset folder in $SHARED_DATA (default ../shared/data).
# Writes OUT/eval (one eval, a setting per mode: report.md, summary.json, the overview plot)
# and OUT/narrowing.md: per mode, prompt tokens, Path%, the tasks whose agent finished, those
# whose first request was over the model's context, and wall time per task.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
data=${SHARED_DATA:-$here/../shared/data}/simpletoolquestions
out=${1:-$here/target/bridged-narrowing}
n=${2:-8}
k=${3:-8}
sy=${SWITCHYARD_BIN:-$here/target/release/switchyard}
py=${SWITCHYARD_AGENT_PYTHON:-${XDG_DATA_HOME:-$HOME/.local/share}/switchyard/agent-clients/venv/bin/python}
model_dir=${XDG_DATA_HOME:-$HOME/.local/share}/switchyard/local-model
name=${SWITCHYARD_LOCAL_MODEL_NAME:-qwen2.5-coder-0.5b-instruct}

die() { echo "bridged-narrowing: $*" >&2; exit 2; }
[ -d "$data" ] || die "$data not found (set SHARED_DATA)"
[ -x "$sy" ] || die "build first (cargo build --release) or set SWITCHYARD_BIN"
[ -x "$py" ] || die "no agent clients at $py (bash scripts/agent-clients.sh install)"
url=${SWITCHYARD_LOCAL_MODEL_URL:-}
if [ -z "$url" ] && [ -f "$model_dir/$name.port" ]; then
  url="http://127.0.0.1:$(cat "$model_dir/$name.port")/v1"
fi
[ -n "$url" ] || die "no local model (bash scripts/local-model.sh start 0.5b)"

rm -rf "$out"
mkdir -p "$out"
"$sy" bench import simpletoolquestions "$data" "$out/import" >/dev/null
# Every (count / TASKS)-th question, so the slice spans the split's relations.
python3 - "$out/import/tasks/test.jsonl" "$n" >"$out/tasks.jsonl" <<'EOF'
import sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
n = min(int(sys.argv[2]), len(lines))
for i in range(n):
    sys.stdout.write(lines[i * len(lines) // n])
EOF
cp "$out/import/switchyard.toml" "$out/import/local.toml"
cat >>"$out/import/local.toml" <<EOF

[models.qwen]
kind = "openai"
base_url = "$url"
model = "$name"
timeout_ms = 180000
max_retries = 1

[roles]
agent = "qwen"
EOF

echo "bridged-narrowing: $n tasks x 4 modes, K = $k, model $name at $url" >&2
"$sy" --config "$out/import/local.toml" eval --tasks "$out/tasks.jsonl" --out "$out/eval" \
  --sweep narrow=off,graph,retrieval,both --set "narrow_k=$k" \
  --agent -- "$py" "$here/tests/agents/openai_agents_mcp.py" --max-turns 4 "{task}"

python3 - "$out" "$k" <<'EOF'
import json, sys
out, k = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(f"{out}/eval/results.jsonl") if l.strip()]
modes = ["off", "graph", "retrieval", "both"]
stats = []
for m in modes:
    rs = [r for r in rows if r["setting"].endswith(f"narrow={m}")]
    if not rs:
        continue
    gold = [r for r in rs if r.get("gold_tools")]
    path = sum(len(set(r["gold_tools"]) & set(r.get("path", []))) / len(r["gold_tools"]) for r in gold)
    finished = [r for r in rs if r["outcome"] != "failed"]
    overflow = sum("maximum context length" in r.get("error", "") for r in rs)
    stats.append({
        "mode": m, "tasks": len(rs),
        "prompt": sum(r["prompt_tokens"] for r in rs) / len(rs),
        "path": 100 * path / len(gold) if gold else 0.0,
        "finished": len(finished), "overflow": overflow,
        "wall": sum(r["wall_ms"] for r in rs) / len(rs) / 1000,
    })
with open(f"{out}/narrowing.md", "w") as f:
    f.write(f"| narrow (K = {k}) | tasks | prompt tokens / task | Path% | agent finished | over the context | wall s / task |\n")
    f.write("|---|---|---|---|---|---|---|\n")
    for s in stats:
        f.write(f"| {s['mode']} | {s['tasks']} | {s['prompt']:.0f} | {s['path']:.1f} | {s['finished']} | {s['overflow']} | {s['wall']:.1f} |\n")
print(open(f"{out}/narrowing.md").read())
print(f"report and plots: {out}/eval/report.md")
EOF
