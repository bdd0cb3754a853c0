#!/usr/bin/env bash
# A real OpenTelemetry receiver for Switchyard's OTLP export test
# (tests/otel_receiver.rs), from PyPI only, at pinned versions:
#
#   arize-phoenix 20.26.1 (PyPI)   a venv, every dependency pinned by
#                                  scripts/otel/requirements.txt; Phoenix takes
#                                  OTLP/HTTP at /v1/traces and answers queries
#                                  for the stored spans at /v1/projects/*/spans
#
#   scripts/otel-receiver.sh install   install what is missing (idempotent; about
#                                      2 minutes and 900 MB cold, under 1 s warm)
#   scripts/otel-receiver.sh start     install if needed, start Phoenix on 127.0.0.1
#                                      with an empty database, wait until it answers
#   scripts/otel-receiver.sh env       print the `export` line for the test (fails
#                                      unless the receiver started here answers)
#   scripts/otel-receiver.sh stop      stop it (by its recorded PID) and remove its database
#   scripts/otel-receiver.sh status    is it running, where
#
# Everything lives in $SWITCHYARD_DATA_DIR/otel (default: the platform's data
# directory, ~/.local/share/switchyard/otel):
#   otel/venv      the Python venv        otel/venv.ok   what `install` installed
#   otel/phoenix   the running receiver's database (removed by stop)
#   otel/phoenix.pid, .port, .log
#
# The variable `env` prints:
#   SWITCHYARD_OTEL_RECEIVER   the receiver's base URL, http://127.0.0.1:PORT:
#                              spans go to $URL/v1/traces, queries to $URL/v1/...
#
# Phoenix is started with its telemetry and every fetch from the internet
# turned off, listening on loopback only (HTTP and gRPC on free ports).
set -euo pipefail

cmd=${1:-install}
here=$(cd "$(dirname "$0")" && pwd)
pins="$here/otel/requirements.txt"

data=${SWITCHYARD_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/switchyard}
root="$data/otel"
venv="$root/venv"
work="$root/phoenix"
pidfile="$root/phoenix.pid"
portfile="$root/phoenix.port"
log="$root/phoenix.log"

say() { echo "otel-receiver: $*" >&2; }

. "$here/lib/keyed-install.sh"

need_python() {
  if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      say "installing python3-venv (apt)"
      apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    else
      say "python3 with venv is missing and cannot be installed here (needs apt-get as root)"; exit 1
    fi
  fi
}

install() {
  mkdir -p "$root"
  local want; want=$(pins_key "$pins")
  if [ -x "$venv/bin/phoenix" ] && keyed "$root/venv.ok" "$want"; then
    return
  fi
  need_python
  say "installing Arize Phoenix into $venv (pinned by scripts/otel/requirements.txt; about 2 minutes cold)"
  rm -rf "$venv" "$root/venv.ok"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$pins"
  "$venv/bin/python" -c 'import phoenix.server.main' >/dev/null
  echo "$want" > "$root/venv.ok"
}

running() {
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

url() { echo "http://127.0.0.1:$(cat "$portfile")"; }

answers() {
  running && [ -f "$portfile" ] \
    && "$venv/bin/python" - "$(url)/healthz" <<'PY' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=2).read()
PY
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
  install
  if answers; then
    say "already running at $(url) (PID $(cat "$pidfile"))"
    return
  fi
  stop_quietly
  rm -rf "$work"
  mkdir -p "$work"
  local port grpc
  port=$(free_port)
  grpc=$(free_port)
  while [ "$grpc" = "$port" ]; do grpc=$(free_port); done
  echo "$port" > "$portfile"
  # setsid: the receiver gets a process group of its own, so stop can end
  # it and anything it started, and a Ctrl-C in this shell does not.
  PHOENIX_WORKING_DIR="$work" PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$port" PHOENIX_GRPC_PORT="$grpc" \
    PHOENIX_TELEMETRY_ENABLED=false PHOENIX_ALLOW_EXTERNAL_RESOURCES=false \
    setsid "$venv/bin/phoenix" serve </dev/null >"$log" 2>&1 &
  echo $! > "$pidfile"
  say "starting Phoenix at $(url) (PID $(cat "$pidfile"), log $log)"
  # Bounded: its first start creates the database (about 25 s on 2 cores).
  for _ in $(seq 1 240); do
    if answers; then
      say "ready at $(url)"
      return
    fi
    if ! running; then
      say "Phoenix exited before it answered; the end of $log:"; tail -20 "$log" >&2; exit 1
    fi
    sleep 0.5
  done
  say "Phoenix did not answer within 120 s; the end of $log:"; tail -20 "$log" >&2
  stop_quietly
  exit 1
}

stop_quietly() {
  if running; then
    local pid; pid=$(cat "$pidfile")
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

case "$cmd" in
  install) install ;;
  start) start ;;
  stop)
    stop_quietly
    rm -rf "$work" "$portfile"
    say "stopped"
    ;;
  env)
    if ! answers; then
      say "no receiver started here answers; run: scripts/otel-receiver.sh start"; exit 1
    fi
    echo "export SWITCHYARD_OTEL_RECEIVER=$(url)"
    ;;
  status)
    if answers; then echo "running at $(url) (PID $(cat "$pidfile"))"; else echo "not running"; exit 1; fi
    ;;
  *) say "unknown command '$cmd' (install, start, env, stop, status)"; exit 2 ;;
esac
