#!/usr/bin/env bash
# The official LLM clients that drive Switchyard's model gateway in the tests,
# from PyPI only, at pinned versions, in one venv:
#
#   openai            Chat Completions, Responses and models (tests/agents/
#                     openai_chat.py, openai_responses.py, openai_models.py)
#   anthropic         Messages (tests/agents/anthropic_messages.py)
#   langgraph         a prebuilt ReAct agent over langchain-openai's ChatOpenAI
#   langchain-openai  (tests/agents/langgraph_agent.py)
#   openai-agents     the OpenAI Agents SDK (tests/agents/openai_agents_sdk.py)
#   opentelemetry-instrumentation-openai-agents-v2, opentelemetry-sdk and
#   opentelemetry-exporter-otlp-proto-http
#                     the SDK's spans over OTLP/HTTP to `switchyard otlp serve`
#                     (tests/agents/openai_agents_otel.py)
#
# every dependency pinned by scripts/agent-clients/requirements.txt (a pip
# freeze, installed with --no-deps, then checked by `pip check`).
#
#   scripts/agent-clients.sh install   install when missing or when the pins changed (idempotent)
#   scripts/agent-clients.sh env       print `export` lines for the tests (fails if not installed)
#
# Everything lives in $SWITCHYARD_DATA_DIR/agent-clients (default: the
# platform's data directory, ~/.local/share/switchyard/agent-clients):
#   agent-clients/venv     the Python venv
#   agent-clients/venv.ok  the key of what it holds (the pins' sha256 and the Python)
#
# The variables `env` prints:
#   SWITCHYARD_AGENT_PYTHON   the venv's python, to run the scripts with
#   SWITCHYARD_AGENT_CLIENTS  the absolute path of tests/agents, the client scripts
# The scripts read their endpoint and key only from OPENAI_BASE_URL and
# OPENAI_API_KEY, or ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY, print one JSON
# object a line and their final answer as the last line (see each docstring).
# A cold install takes about half a minute.
set -euo pipefail

cmd=${1:-install}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
pins="$here/agent-clients/requirements.txt"
clients="$repo/tests/agents"

data=${SWITCHYARD_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/switchyard}
root="$data/agent-clients"
venv="$root/venv"
python="$venv/bin/python"
marker="$root/venv.ok"

# What must import for the venv to count as installed.
imports='import openai, anthropic, langgraph.prebuilt, langchain_openai, agents'

say() { echo "agent-clients: $*" >&2; }

. "$here/lib/keyed-install.sh"

need_tools() {
  command -v python3 >/dev/null 2>&1 || { say "needs python3"; exit 1; }
  if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      say "installing python3-venv (apt)"
      apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    else
      say "python3 has no venv/ensurepip and it cannot be installed here (needs apt-get as root)"; exit 1
    fi
  fi
}

installed() {
  [ -x "$python" ] && keyed "$marker" "$(pins_key "$pins")"
}

install() {
  if installed && "$python" -c "$imports" >/dev/null 2>&1; then
    return
  fi
  say "installing openai, anthropic, langgraph, langchain-openai and openai-agents into $venv (pinned by scripts/agent-clients/requirements.txt)"
  rm -rf "$venv" "$marker"
  mkdir -p "$root"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps -r "$pins"
  # --no-deps installs the pins alone: a dependency missing from them shows here.
  "$venv/bin/pip" check --disable-pip-version-check >/dev/null \
    || { "$venv/bin/pip" check --disable-pip-version-check >&2 || true; say "the pins are incomplete"; exit 1; }
  "$python" -c "$imports"
  pins_key "$pins" > "$marker"
}

print_env() {
  if ! installed; then
    say "not installed under $root, or installed from other pins (run: scripts/agent-clients.sh install)"; exit 1
  fi
  [ -d "$clients" ] || { say "no client scripts at $clients"; exit 1; }
  while IFS='=' read -r name value; do
    echo "export $name='${value//\'/\'\\\'\'}'"
  done <<EOF
SWITCHYARD_AGENT_PYTHON=$python
SWITCHYARD_AGENT_CLIENTS=$clients
EOF
}

case "$cmd" in
  install)
    need_tools
    install
    say "ready in $root ($("$python" -c 'from importlib.metadata import version as v; print(", ".join(p + " " + v(p) for p in ("openai", "anthropic", "langgraph", "langchain-openai", "openai-agents")))'))"
    ;;
  env) print_env ;;
  -h | --help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) echo "usage: $0 install|env" >&2; exit 2 ;;
esac
