#!/usr/bin/env bash
# The fuzz campaign: every parser's fuzz test in release mode
# with SWITCHYARD_FUZZ_CASES cases each (100,000 unless given), then the
# table of figures. Usage: scripts/fuzz-campaign.sh [cases] [test filter]
# A CI run of the same tests (a thousand cases or fewer each) is part of
# `cargo test --test all fuzz`. FUZZ_OPT_DEV=1 builds the dev profile with
# this crate at opt-level 3 instead (its dependencies stay at the dev
# profile's opt-level 1): much quicker to build where release dependencies
# are not built yet, somewhat slower to run.
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-100000}"
filter="${2:-fuzz::}"
report="$(mktemp)"
trap 'rm -f "$report"' EXIT
status=0
profile=(--release)
if [ -n "${FUZZ_OPT_DEV:-}" ]; then
    profile=()
    export CARGO_PROFILE_DEV_OPT_LEVEL=3
fi
SWITCHYARD_FUZZ_CASES="$cases" SWITCHYARD_FUZZ_REPORT="$report" \
    cargo test "${profile[@]}" --test all "$filter" -- --test-threads "${FUZZ_THREADS:-2}" || status=$?
echo
echo "fuzz campaign, $cases cases per parser:"
sort "$report"
exit "$status"
