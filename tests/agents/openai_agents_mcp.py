"""An OpenAI Agents SDK agent whose model and tools both go through Switchyard.

    openai_agents_mcp.py [--max-turns N] TASK

An `Agent` with no tools of its own and one MCP server,
`MCPServerStreamableHttp` at $SWITCHYARD_MCP_URL with the bearer token
$SWITCHYARD_MCP_TOKEN: the tools its model is offered are Switchyard's
library, each call a tool call of the session. Its model is
`OpenAIChatCompletionsModel($AGENT_MODEL or gpt-4o-mini)` over OPENAI_BASE_URL
and OPENAI_API_KEY. Tracing is disabled (nothing is exported).

Prints one JSON object per line on stdout: {"client": ...}, the MCP tools it
was offered {"mcp_tools": n}, each item the run produced {"type", "raw"}
(and "output" for tool results), then {"answer": text}; the last line is the
final output. Any failure: a message on stderr and a non-zero exit.
"""

import argparse
import asyncio
import os
from importlib.metadata import version

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI

from agent_common import NAME, emit, env, run


def plain(obj):
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_none=True)
    return obj


async def main_async(a) -> str:
    client = AsyncOpenAI(base_url=env("OPENAI_BASE_URL"), api_key=env("OPENAI_API_KEY"), max_retries=0)
    model_name = os.environ.get("AGENT_MODEL", "gpt-4o-mini")
    params = {"url": env("SWITCHYARD_MCP_URL"),
              "headers": {"Authorization": f"Bearer {env('SWITCHYARD_MCP_TOKEN')}"}}
    async with MCPServerStreamableHttp(params=params, name="switchyard", cache_tools_list=True) as server:
        tools = await server.list_tools()
        emit({"mcp_tools": len(tools)})
        agent = Agent(
            name="assistant",
            instructions="You are terse. Use a tool when one helps, then answer in one line.",
            mcp_servers=[server],
            model=OpenAIChatCompletionsModel(model=model_name, openai_client=client),
        )
        result = await Runner.run(agent, a.task, max_turns=a.max_turns)
    for item in result.new_items:
        line = {"type": item.type, "raw": plain(item.raw_item)}
        if item.type == "tool_call_output_item":
            line["output"] = item.output
        emit(line)
    if result.final_output is None:
        raise RuntimeError("the run ended without a final output")
    return str(result.final_output)


def main() -> None:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    p.add_argument("task")
    p.add_argument("--max-turns", type=int, default=6)
    a = p.parse_args()
    set_tracing_disabled(True)
    emit({"client": "openai-agents", "version": version("openai-agents"), "mcp": version("mcp")})
    answer = asyncio.run(main_async(a))
    emit({"answer": answer})
    print(answer, flush=True)


if __name__ == "__main__":
    run(main, "OPENAI_API_KEY")
