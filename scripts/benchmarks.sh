#!/usr/bin/env bash
# Imports every benchmark of ../shared/data and runs it through `eval` with
# the simulated model, one report folder per benchmark:
#   scripts/benchmarks.sh [OUT] [SWITCHYARD_BINARY]
# OUT defaults to $SWITCHYARD_DATA_DIR/benchmarks (or ~/.local/share/switchyard/benchmarks).
# Each eval writes OUT/NAME/eval/{results.jsonl,summary.json,report.md,*.svg,*.png}.
# Extra flags for every eval (e.g. --jobs 4, --count 20) come from $EVAL_FLAGS.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
data=${SHARED_DATA:-$here/../shared/data}
out=${1:-${SWITCHYARD_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/switchyard}/benchmarks}
sy=${2:-$here/target/release/switchyard}
flags=${EVAL_FLAGS:-}
if [ ! -d "$data" ]; then echo "benchmarks: $data not found; nothing to run" >&2; exit 0; fi
[ -x "$sy" ] || { echo "benchmarks: build first (cargo build --release) or give the binary" >&2; exit 2; }
mkdir -p "$out"

bench() { # NAME DATASET_DIR SPLIT EVAL_ARGS...
  local name=$1 dir=$2 split=$3; shift 3
  [ -d "$dir" ] || { echo "benchmarks: skipped $name: $dir not found" >&2; return; }
  rm -rf "$out/$name"
  "$sy" bench import "$name" "$dir" "$out/$name/import" >/dev/null
  echo "== $name ($split)" >&2
  # shellcheck disable=SC2086
  "$sy" --config "$out/$name/import/switchyard.toml" eval --tasks "$out/$name/import/tasks/$split.jsonl" \
    --out "$out/$name/eval" "$@" $flags
}

bench funcqa "$data/funcqa" test_oh --strategy react,toolnet,rewoo,atc
bench gsm8k-xl "$data/gsm8k-xl" test --strategy react,toolnet,rewoo
bench kamel "$data/kamel" test_first_100 --strategy react,toolnet --react-k 5
bench simpletoolquestions "$data/simpletoolquestions" test --strategy react,toolnet --react-k 5
bench api-bank "$data/api-bank" level-1-given-desc --strategy react,toolnet,rewoo
bench toolbench "$data/toolbench-samples" all --strategy react,toolnet --react-k 5 --set top_k=5 --budget 20 --tool-costs random:1-10 --sweep tau=0,0.15,0.3
bench atc-tmdb "$data/atc-tmdb" tmdb --strategy atc,react,toolnet,rewoo --react-k 20
