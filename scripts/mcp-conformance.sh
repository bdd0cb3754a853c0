#!/usr/bin/env bash
# MCP's conformance suite (@modelcontextprotocol/conformance, installed by
# scripts/mcp-servers.sh) against Switchyard as an MCP client over
# Streamable HTTP.
#
#   scripts/mcp-conformance.sh BIN [SCENARIO...]     e.g. BIN=target/debug/switchyard
#
# Scenarios (default: both):
#   initialize   the suite serves plain JSON at http://localhost:PORT (no path) and
#                checks the initialize request: protocolVersion is 2025-06-18 or
#                2025-11-25, clientInfo has a name and a version.
#                Runs: BIN tools list --mcp-url URL
#   tools_call   the suite serves the TypeScript SDK's stateless Streamable HTTP at
#                http://localhost:PORT/mcp with one tool, add_numbers {a: number,
#                b: number}, and checks that the client called it.
#                Runs: BIN tools call add_numbers --args '{"a":5,"b":3}' --mcp-url URL
#
# The suite appends the server's URL to the command, runs it through a shell,
# and fails a scenario on any FAILURE or WARNING check, a client timeout
# (30 s) or a non-zero client exit. It passes a scenario in which the client
# never connected (0 checks), so this script also requires the scenario's own
# check (mcp-client-initialization, tool-add-numbers) to be SUCCESS.
# Exits 1 if any scenario fails; prints the suite's output and ends with
# "conformance: N passed, N failed".
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 BIN [initialize|tools_call ...]" >&2; exit 2
fi
bin=$1; shift
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(initialize tools_call)

here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${SWITCHYARD_MCP_CONFORMANCE:-}" ]; then
  env_lines=$(bash "$here/mcp-servers.sh" env)
  eval "$env_lines"
fi

case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
if [ ! -x "$bin" ]; then
  echo "mcp-conformance: $bin is not an executable" >&2; exit 2
fi
# The suite splits --command on spaces and hands the words to a shell, so
# shell quoting in it works; a path with spaces is quoted here.
qbin=$(printf '%q' "$bin")

out=$(mktemp -d "${TMPDIR:-/tmp}/switchyard-conformance.XXXXXX")
passed=0; failed=0
for s in "${scenarios[@]}"; do
  case "$s" in
    initialize) client="$qbin tools list --mcp-url"; want=mcp-client-initialization ;;
    tools_call) client="$qbin tools call add_numbers --args '{\"a\":5,\"b\":3}' --mcp-url"; want=tool-add-numbers ;;
    *) echo "mcp-conformance: no client command for scenario '$s' (initialize, tools_call)" >&2; exit 2 ;;
  esac
  echo "== conformance scenario $s: $client <URL>"
  rc=0
  # shellcheck disable=SC2086 # SWITCHYARD_MCP_CONFORMANCE is "<node22> <conformance js>"
  $SWITCHYARD_MCP_CONFORMANCE client --command "$client" --scenario "$s" \
    --timeout 30000 -o "$out" 2>&1 || rc=$?
  checks=$(ls -d "$out/$s"-*/checks.json 2>/dev/null | tail -1 || true)
  own=missing
  if [ -n "$checks" ]; then
    own=$(python3 -c 'import json,sys
cs = json.load(open(sys.argv[1]))
st = [c["status"] for c in cs if c["id"] == sys.argv[2]]
print(",".join(st) or "missing")' "$checks" "$want")
  fi
  if [ "$rc" = 0 ] && [ "$own" = SUCCESS ]; then
    echo "== $s: PASSED"
    passed=$((passed + 1))
  else
    echo "== $s: FAILED (suite exit $rc, check $want: $own; results in ${checks%/checks.json})"
    failed=$((failed + 1))
  fi
done
if [ "$failed" = 0 ]; then rm -rf "$out"; fi
echo "conformance: $passed passed, $failed failed"
[ "$failed" = 0 ]
