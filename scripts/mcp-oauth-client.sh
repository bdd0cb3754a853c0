#!/usr/bin/env bash
# The client side of MCP's conformance `auth/*` scenarios, run as a user
# would run Switchyard against a server that wants an authorized user:
#   scripts/mcp-oauth-client.sh BIN URL
# writes a config with the server as an [[mcp]] entry with [mcp.oauth], logs
# in with `mcp login remote --follow` (the suite's authorization server
# approves at once, so no browser is needed), then lists the tools and calls
# each of the server's with `tools call`, every request with the kept token.
# A call refused for want of a scope is called again after a login with the
# scope the refusal names.
# With SWITCHYARD_OAUTH_BROWSER=curl the login is the one a person makes
# (the address printed, the redirect awaited on loopback), curl following it.
# The suite's MCP_CONFORMANCE_CONTEXT may name a pre-registered client
# (client_id, client_secret): they go into [mcp.oauth] as client_id and, by
# way of an environment variable, client_secret_env.
set -euo pipefail
bin=${1:?usage: $0 BIN URL}; url=${2:?usage: $0 BIN URL}
dir=$(mktemp -d "${TMPDIR:-/tmp}/switchyard-oauth.XXXXXX")
trap 'rm -rf "$dir"' EXIT

read -r client_id client_secret < <(python3 -c 'import json, os
c = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
print(c.get("client_id") or "-", c.get("client_secret") or "-")')
{
  echo '[[mcp]]'
  echo 'name = "remote"'
  echo "url = \"$url\""
  echo '[mcp.oauth]'
  # The suite's authorization servers that take a client metadata document
  # accept this one.
  echo 'client_metadata_url = "https://conformance-test.local/client-metadata.json"'
  if [ "$client_id" != - ]; then
    echo "client_id = \"$client_id\""
    if [ "$client_secret" != - ]; then echo 'client_secret_env = "CONFORMANCE_CLIENT_SECRET"'; fi
  fi
} > "$dir/config.toml"
export CONFORMANCE_CLIENT_SECRET=$client_secret
sy() { "$bin" --config "$dir/config.toml" --data-dir "$dir/data" "$@"; }
if [ "${SWITCHYARD_OAUTH_BROWSER:-}" = curl ]; then
  # The login a person makes: `mcp login` prints the address and waits on
  # loopback; curl plays the browser, following the redirect back to it.
  sy mcp login remote 2> "$dir/login.err" &
  login=$!
  address=
  for _ in $(seq 1 100); do
    address=$(grep -o 'http://[^ ]*/authorize?[^ ]*' "$dir/login.err" || true)
    [ -n "$address" ] && break
    sleep 0.1
  done
  [ -n "$address" ] || { cat "$dir/login.err" >&2; echo "mcp-oauth-client: no address printed" >&2; exit 1; }
  curl -sS -L "$address" >&2
  wait $login
  cat "$dir/login.err" >&2
else
  sy mcp login remote --follow
fi
names=$(sy tools list --json | python3 -c 'import json, sys
for t in json.load(sys.stdin):
    if (t.get("executor") or {}).get("kind") == "mcp":
        print(t["name"])')
for t in $names; do
  # A call refused for want of a scope says which to log in with again, as
  # a user would read it: `... --scope 'SCOPES'`.
  if ! sy tools call "$t" --args '{}' 2> "$dir/call.err"; then
    cat "$dir/call.err" >&2
    scope=$(sed -n "s/.*--scope '\([^']*\)'.*/\1/p" "$dir/call.err" | head -1)
    if [ -n "$scope" ]; then
      sy mcp login remote --follow --scope "$scope"
      sy tools call "$t" --args '{}' || true
    fi
  fi
done
