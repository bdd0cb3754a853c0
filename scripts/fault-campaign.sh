#!/usr/bin/env bash
# The fault campaign at full size: RUNS seeded sessions of the real
# engine (default 1000) across react, toolnet, rewoo and atc, with random tool
# and model faults, BTP on and off, and pauses, steps, resumes, parameter and
# fault changes at decision points; built in release, it prints the table of
# runs, faults, controls, panics, hangs, lost events, fold mismatches and
# budget violations, and fails when any run broke an invariant.
#
#   scripts/fault-campaign.sh [RUNS] [FIRST_SEED]
#
# SWITCHYARD_CAMPAIGN_JOBS sets how many runs go at once (default 4: their
# timeout faults wait rather than compute).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1000}"
seed="${2:-1}"
SWITCHYARD_CAMPAIGN_RUNS="$runs" SWITCHYARD_CAMPAIGN_SEED="$seed" \
    cargo test --release --test all fault_campaign::fault_campaign -- --exact --nocapture
