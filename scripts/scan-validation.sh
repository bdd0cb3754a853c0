#!/usr/bin/env bash
# The scanners' labelled set and their precision and recall on it: four evals
# of the sample tasks (react and toolnet, 24 tasks each), one clean and one per
# kind of fault (a tool that finds nothing, so it is called again: a looping
# tool; a tool that answers with an error: a wrong-argument tool; a model whose
# calls fail), then one scan of all their traces with --validate. A run's label
# is the kind of fault its trace marks it met; no scanner reads those marks.
#
#   scripts/scan-validation.sh [OUT] [-- SCAN_ARGS…]   (default OUT: /tmp/scan-validation)
#
# SCAN_ARGS go to `scan`, e.g. `--model qwen --config local.toml` for a real
# scanner model (the simulated one reads the failed runs otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-/tmp/scan-validation}"
shift || true
[ "${1:-}" = "--" ] && shift
cargo build --release --quiet
sy=target/release/switchyard
rm -rf "$out"
mkdir -p "$out"
run_eval() {
    local name="$1"
    shift
    "$sy" --data-dir "$out/data" eval --strategy react,toolnet --count 24 --seed 11 --out "$out/$name" "$@" >/dev/null
}
run_eval clean
run_eval looping --fault geo_lookup:nothing-found:until-cleared --fault calculator:nothing-found:until-cleared
run_eval wrong-argument --fault city_stats:error:until-cleared --fault date_add_days:error:until-cleared
run_eval failing-model --fault model:actor:http-500:p=0.2
"$sy" scan --validate --fresh --out "$out/scan" "$@" "$out"/*/traces/*/*.jsonl
