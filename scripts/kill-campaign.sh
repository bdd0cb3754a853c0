#!/usr/bin/env bash
# The kill campaign, at full size: the real binary (release
# build) killed with SIGKILL at seeded random moments, KILLS times (default
# 240, a sixth per target: run toolnet, run with a BTP budget, run rewoo,
# run recording a tool cassette, run atc probing, the workbench under a
# pty), then the SIGTERM/SIGINT tests. Prints a table: kills per target,
# torn trace last lines, trace and store loads (torn stores must be 0), and
# restarts that went on from what was saved.
#
#   scripts/kill-campaign.sh [KILLS] [SEED]
#
# CI runs the same test with its default of 12 kills (`cargo test`).
set -euo pipefail

kills=${1:-240}
seed=${2:-16}
cd "$(dirname "$0")/.."

echo "kill campaign: $kills kills, seed $seed (release build)" >&2
SWITCHYARD_KILLS=$kills SWITCHYARD_KILL_SEED=$seed \
  cargo test --release --test kill_campaign -- --nocapture --test-threads 1
