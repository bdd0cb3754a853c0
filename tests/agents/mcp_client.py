"""Drive an MCP server with the MCP Python SDK's client (`mcp`).

    mcp_client.py --stdio -- CMD ARG...     start CMD and speak MCP on its stdin/stdout
    mcp_client.py --http [URL]              Streamable HTTP at URL (default: $SWITCHYARD_MCP_URL),
                                            the bearer token from $SWITCHYARD_MCP_TOKEN when set
    mcp_client.py --config FILE             the first server of an mcpServers file (mode 0600)
    then --call TOOL JSON (repeatable)      call TOOL with the JSON arguments, in order

Lists every tool (following nextCursor), then makes the calls. Prints one
JSON object per line on stdout: {"client": ...}, {"protocol": version},
{"tools": [names], "pages": n}, then per call {"call", "is_error", "text",
"structured"} or, when the server answered with a protocol error,
{"call", "error": message, "code": code}; the last line is the number of
tools. A failure to connect: a message on stderr and exit 1.
"""

import argparse
import asyncio
import json
import os
from importlib.metadata import version

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import PaginatedRequestParams

from agent_common import NAME, emit, run


async def session_work(session: ClientSession, calls) -> int:
    init = await session.initialize()
    emit({"protocol": init.protocol_version, "server": init.server_info.name})
    names, pages, cursor = [], 0, None
    while True:
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        pages += 1
        names += [t.name for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            break
    emit({"tools": names, "pages": pages})
    for tool, args in calls:
        try:
            r = await session.call_tool(tool, json.loads(args))
        except MCPError as e:
            emit({"call": tool, "error": e.message, "code": e.code})
            continue
        text = " ".join(c.text for c in r.content if getattr(c, "type", "") == "text")
        emit({"call": tool, "is_error": bool(r.is_error), "text": text, "structured": r.structured_content})
    return len(names)


def from_config(path: str):
    """The first server of an `mcpServers` file (Claude Code's --mcp-config
    form): its URL and headers. A file others may read is refused."""
    mode = os.stat(path).st_mode & 0o777
    if mode & 0o077:
        raise SystemExit(f"{NAME}: {path} has mode {oct(mode)}: it holds a token")
    with open(path) as f:
        server = next(iter(json.load(f)["mcpServers"].values()))
    if server.get("type") != "http":
        raise SystemExit(f"{NAME}: {path}: the server's type is {server.get('type')!r}, not 'http'")
    return server["url"], server.get("headers")


async def main_async(a) -> int:
    if a.stdio:
        params = StdioServerParameters(command=a.command[0], args=a.command[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                return await session_work(session, a.call)
    if a.config:
        url, headers = from_config(a.config)
    else:
        url = a.http or os.environ.get("SWITCHYARD_MCP_URL")
        if not url:
            raise SystemExit(f"{NAME}: no URL: pass --http URL or set SWITCHYARD_MCP_URL")
        token = os.environ.get("SWITCHYARD_MCP_TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                return await session_work(session, a.call)


def main() -> None:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    p.add_argument("--stdio", action="store_true", help="start the command after -- and speak over its stdio")
    p.add_argument("--http", nargs="?", const="", default=None, help="Streamable HTTP URL")
    p.add_argument("--config", help="an mcpServers file (Claude Code's --mcp-config form): its first server, over HTTP")
    p.add_argument("--call", nargs=2, action="append", default=[], metavar=("TOOL", "JSON"))
    p.add_argument("command", nargs="*")
    a = p.parse_args()
    if [a.stdio, a.http is not None, a.config is not None].count(True) != 1:
        raise SystemExit(f"{NAME}: give one of --stdio -- CMD, --http [URL] or --config FILE")
    emit({"client": "mcp", "version": version("mcp")})
    n = asyncio.run(main_async(a))
    print(n, flush=True)


if __name__ == "__main__":
    run(main, "SWITCHYARD_MCP_TOKEN")
