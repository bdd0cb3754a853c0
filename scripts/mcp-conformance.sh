#!/usr/bin/env bash
# MCP's conformance suite (@modelcontextprotocol/conformance, installed by
# scripts/mcp-servers.sh) against Switchyard as an MCP client over
# Streamable HTTP, or (`server`) against Switchyard as an MCP server.
#
#   scripts/mcp-conformance.sh BIN [SCENARIO...]          e.g. BIN=target/debug/switchyard
#   scripts/mcp-conformance.sh server BIN [SCENARIO...]
#
# Server scenarios (default: all seven): `BIN mcp serve --listen
# 127.0.0.1:0` over the library of tests/fixtures/mcp-gateway (the tools
# the suite calls, as command tools), then the suite against
# http://localhost:PORT/mcp:
#   server-initialize, ping, tools-list, json-schema-2020-12 (the schema's
#   $schema, $defs and additionalProperties kept), dns-rebinding-protection
#   (a foreign Host/Origin refused, localhost's accepted),
#   tools-call-simple-text, tools-call-error (a failed tool is isError).
# The others are about what a gateway of tools does not serve (prompts,
# resources, completion, logging, sampling, elicitation, progress, images).
#
# Client scenarios (default: all eighteen):
#   initialize   the suite serves plain JSON at http://localhost:PORT (no path) and
#                checks the initialize request: protocolVersion is 2025-06-18 or
#                2025-11-25, clientInfo has a name and a version.
#                Runs: BIN tools list --mcp-url URL
#   tools_call   the suite serves the TypeScript SDK's stateless Streamable HTTP at
#                http://localhost:PORT/mcp with one tool, add_numbers {a: number,
#                b: number}, and checks that the client called it.
#                Runs: BIN tools call add_numbers --args '{"a":5,"b":3}' --mcp-url URL
#   sse-retry    the server closes a call's SSE stream after a `retry: 500` priming
#                event; the client must reconnect with GET after 500 ms, sending
#                Last-Event-ID. Runs: BIN tools call test_reconnection --mcp-url URL
#   auth/*       the fourteen of revision 2025-11-25: metadata discovery (default,
#                var1-3), a client metadata document (basic-cimd), scope selection
#                (from WWW-Authenticate, from scopes_supported, omitted, step-up,
#                retry limit), token endpoint auth (basic, post, none) and a
#                pre-registered client. Runs: scripts/mcp-oauth-client.sh BIN URL
#                (a config with [mcp.oauth], `mcp login --follow`, the calls).
#   auth/browser-login  auth/metadata-default again, logged in as a person does:
#                `mcp login` prints the address and waits for the redirect on
#                loopback; curl plays the browser.
#
# The suite appends the server's URL to the command, runs it through a shell,
# and fails a scenario on any FAILURE or WARNING check, a client timeout
# (30 s) or a non-zero client exit. It passes a scenario in which the client
# never connected (0 checks), so this script also requires the scenario's own
# check (mcp-client-initialization, tool-add-numbers, client-sse-retry-timing,
# token-request for auth) to be SUCCESS.
# Exits 1 if any scenario fails; prints the suite's output and ends with
# "conformance: N passed, N failed".
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 [server] BIN [SCENARIO ...]" >&2; exit 2
fi
side=client
if [ "$1" = server ]; then side=server; shift; fi
bin=${1:?usage: $0 [server] BIN [SCENARIO ...]}; shift
scenarios=("$@")
if [ ${#scenarios[@]} = 0 ]; then
  if [ "$side" = server ]; then
    scenarios=(server-initialize ping tools-list json-schema-2020-12 dns-rebinding-protection
      tools-call-simple-text tools-call-error)
  else
    scenarios=(initialize tools_call sse-retry auth/metadata-default auth/metadata-var1
      auth/metadata-var2 auth/metadata-var3 auth/basic-cimd auth/scope-from-www-authenticate
      auth/scope-from-scopes-supported auth/scope-omitted-when-undefined auth/scope-step-up
      auth/scope-retry-limit auth/token-endpoint-auth-basic auth/token-endpoint-auth-post
      auth/token-endpoint-auth-none auth/pre-registration auth/browser-login)
  fi
fi

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

if [ "$side" = server ]; then
  fixtures=$(cd "$here/../tests/fixtures/mcp-gateway" && pwd)
  "$bin" --config "$fixtures/config.toml" --data-dir "$out/data" mcp serve --listen 127.0.0.1:0 \
    2> "$out/serve.err" &
  server=$!
  trap 'kill -INT $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
  url=
  for _ in $(seq 1 100); do
    url=$(sed -n 's|^MCP endpoint ready at http://127.0.0.1:\([0-9]*\)/mcp.*|http://localhost:\1/mcp|p' "$out/serve.err")
    [ -n "$url" ] && break
    kill -0 $server 2>/dev/null || { cat "$out/serve.err" >&2; echo "mcp-conformance: mcp serve exited" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$url" ] || { cat "$out/serve.err" >&2; echo "mcp-conformance: mcp serve never got ready" >&2; exit 1; }
  for s in "${scenarios[@]}"; do
    echo "== conformance server scenario $s against $url"
    rc=0
    # shellcheck disable=SC2086 # SWITCHYARD_MCP_CONFORMANCE is "<node22> <conformance js>"
    $SWITCHYARD_MCP_CONFORMANCE server --url "$url" --scenario "$s" -o "$out" 2>&1 | tee "$out/$s.log" || rc=$?
    # The suite prints "Passed: N/M, F failed, W warnings"; all must pass, none may warn.
    line=$(grep -a "^Passed:" "$out/$s.log" | tail -1 || true)
    if [ "$rc" = 0 ] && [[ "$line" =~ ^Passed:\ ([0-9]+)/([0-9]+),\ 0\ failed,\ 0\ warnings ]] \
      && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[1]}" -gt 0 ]; then
      echo "== $s: PASSED"
      passed=$((passed + 1))
    else
      echo "== $s: FAILED (suite exit $rc; ${line:-no result line})"
      failed=$((failed + 1))
    fi
  done
  kill -INT $server; wait $server || true
  trap - EXIT
  if [ "$failed" = 0 ]; then rm -rf "$out"; fi
  echo "conformance (server): $passed passed, $failed failed"
  [ "$failed" = 0 ]
  exit
fi
for s in "${scenarios[@]}"; do
  real=$s
  case "$s" in
    initialize) client="$qbin tools list --mcp-url"; want=mcp-client-initialization ;;
    tools_call) client="$qbin tools call add_numbers --args '{\"a\":5,\"b\":3}' --mcp-url"; want=tool-add-numbers ;;
    sse-retry) client="$qbin tools call test_reconnection --mcp-url"; want=client-sse-retry-timing ;;
    auth/browser-login)
      real=auth/metadata-default; want=token-request
      client="env SWITCHYARD_OAUTH_BROWSER=curl bash $(printf '%q' "$here/mcp-oauth-client.sh") $qbin" ;;
    auth/*) client="bash $(printf '%q' "$here/mcp-oauth-client.sh") $qbin"; want=token-request ;;
    *) echo "mcp-conformance: no client command for scenario '$s'" >&2; exit 2 ;;
  esac
  echo "== conformance scenario $s: $client <URL>"
  rc=0
  # shellcheck disable=SC2086 # SWITCHYARD_MCP_CONFORMANCE is "<node22> <conformance js>"
  $SWITCHYARD_MCP_CONFORMANCE client --command "$client" --scenario "$real" \
    --timeout 30000 -o "$out" 2>&1 || rc=$?
  checks=$(ls -d "$out/$real"-*/checks.json 2>/dev/null | tail -1 || true)
  own=missing
  if [ -n "$checks" ]; then
    own=$(python3 -c 'import json,sys
cs = json.load(open(sys.argv[1]))
st = [c["status"] for c in cs if c["id"] == sys.argv[2]]
# A check made more than once (a second token request) must pass each time.
print("missing" if not st else "SUCCESS" if set(st) == {"SUCCESS"} else ",".join(st))' "$checks" "$want")
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
