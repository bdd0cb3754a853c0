"""Drive an OpenAI-compatible endpoint with LangGraph's prebuilt ReAct agent.

    langgraph_agent.py [--stream] [--responses] [--mcp] [--max-tokens N] [--max-retries N]
                       [--timeout S] [--recursion-limit N] TASK

`langgraph.prebuilt.create_react_agent` over langchain-openai's
`ChatOpenAI(model=$AGENT_MODEL or gpt-4o-mini, temperature=0)` at
OPENAI_BASE_URL with OPENAI_API_KEY (both from the environment only, passed
explicitly too; the key is never printed), with two deterministic local
tools, add(a, b) and multiply(a, b), and recursion_limit 12. With --mcp its
tools are instead every tool of the MCP server at $SWITCHYARD_MCP_URL (bearer
$SWITCHYARD_MCP_TOKEN), each a LangChain StructuredTool with the tool's own
input schema whose call is a `tools/call` (the MCP SDK's client): the peer of
Switchyard's strategies on the same library (scripts/peer-side-by-side.sh). Like
scripts/langgraph_react.py, the tools are langchain_core `@tool` functions and
the graph's messages are checked, not assumed. ChatOpenAI asks Chat
Completions (use_responses_api=False) unless --responses; --stream makes it
stream (SSE). LangSmith tracing is off.

Prints one JSON object per line on stdout: {"client": ...} first, then each
message of the final state {"type", "content", ...}, then {"answer": text};
the last line is the final AI message's text itself. Any failure (an error,
the recursion limit, the agent's "need more steps" stand-in answer, no final
AI answer): a message on stderr and a non-zero exit.
"""

import argparse
import asyncio
import os
import warnings
from importlib.metadata import version

# No traces leave the machine, whatever the environment says.
os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import StructuredTool, tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.errors import GraphRecursionError  # noqa: E402

with warnings.catch_warnings():
    # create_react_agent is deprecated for langchain.agents.create_agent
    # (another package); it is still LangGraph's prebuilt ReAct agent.
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent  # noqa: E402

from agent_common import NAME, emit, env, run

# What create_react_agent answers, instead of the model, when it runs out of steps.
OUT_OF_STEPS = "Sorry, need more steps to process this request."


def number(v: float):
    return int(v) if float(v).is_integer() else v


@tool
def add(a: float, b: float) -> str:
    """Add two numbers and return their sum."""
    return str(number(a + b))


@tool
def multiply(a: float, b: float) -> str:
    """Multiply two numbers and return their product."""
    return str(number(a * b))


def message_line(m) -> dict:
    line = {"type": m.type, "content": m.content}
    for attr in ("name", "tool_call_id", "status"):
        v = getattr(m, attr, None)
        if v:
            line[attr] = v
    if m.type == "ai":
        line["tool_calls"] = [{"id": c["id"], "name": c["name"], "args": c["args"]} for c in m.tool_calls]
        if m.invalid_tool_calls:
            line["invalid_tool_calls"] = m.invalid_tool_calls
        if m.usage_metadata:
            line["usage"] = dict(m.usage_metadata)
        fin = (m.response_metadata or {}).get("finish_reason")
        if fin:
            line["finish_reason"] = fin
    return line


def mcp_tool(session, t) -> StructuredTool:
    """An MCP tool as LangChain sees a tool: its name, description and input
    schema as the server listed them; a call is the server's `tools/call`,
    its text content the result (an error result's text, marked, so the
    model reads it as langgraph's ToolNode shows a raised error)."""

    async def call(**kwargs) -> str:
        r = await session.call_tool(t.name, kwargs)
        text = " ".join(c.text for c in r.content if getattr(c, "type", "") == "text")
        return f"Error: {text}" if r.is_error else text

    return StructuredTool(name=t.name, description=t.description or t.name,
                          args_schema=t.input_schema, coroutine=call)


async def invoke(agent, task: str, limit: int):
    try:
        return await agent.ainvoke({"messages": [HumanMessage(content=task)]},
                                   config={"recursion_limit": limit})
    except GraphRecursionError as e:
        raise RuntimeError(f"no answer within recursion_limit {limit}: {e}") from None


async def with_mcp_tools(model, task: str, limit: int):
    """The agent over the MCP server's tools, every page of them."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.types import PaginatedRequestParams

    headers = {"Authorization": f"Bearer {env('SWITCHYARD_MCP_TOKEN')}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(env("SWITCHYARD_MCP_URL"), http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                listed, cursor = [], None
                while True:
                    page = await session.list_tools(
                        params=PaginatedRequestParams(cursor=cursor) if cursor else None)
                    listed += page.tools
                    cursor = page.next_cursor
                    if not cursor:
                        break
                emit({"mcp_tools": len(listed)})
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    agent = create_react_agent(model, [mcp_tool(session, t) for t in listed])
                return await invoke(agent, task, limit)


def main() -> None:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    p.add_argument("task")
    p.add_argument("--stream", action="store_true", help="ChatOpenAI streams its calls (SSE)")
    p.add_argument("--responses", action="store_true", help="ChatOpenAI uses the Responses API")
    p.add_argument("--mcp", action="store_true", help="the MCP server's tools at $SWITCHYARD_MCP_URL, not add/multiply")
    p.add_argument("--max-tokens", type=int, default=None, help="each reply's token cap (default: none sent)")
    p.add_argument("--max-retries", type=int, default=2, help="the SDK's retries (default 2)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    p.add_argument("--recursion-limit", type=int, default=12, help="the graph's steps (default 12)")
    a = p.parse_args()

    base_url, api_key = env("OPENAI_BASE_URL"), env("OPENAI_API_KEY")

    model_name = os.environ.get("AGENT_MODEL", "gpt-4o-mini")
    model = ChatOpenAI(
        model=model_name,
        temperature=0,
        base_url=base_url,
        api_key=api_key,
        use_responses_api=a.responses,
        streaming=a.stream,
        max_retries=a.max_retries,
        timeout=a.timeout,
        max_tokens=a.max_tokens,
    )
    emit({"client": "langgraph", "version": version("langgraph"),
          "langchain_openai": version("langchain-openai"), "openai": version("openai"),
          "api": "responses" if a.responses else "chat.completions",
          "model": model_name, "stream": a.stream, "tools": "mcp" if a.mcp else "local"})

    if a.mcp:
        state = asyncio.run(with_mcp_tools(model, a.task, a.recursion_limit))
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            agent = create_react_agent(model, [add, multiply])
        state = asyncio.run(invoke(agent, a.task, a.recursion_limit))
    msgs = state["messages"]
    for m in msgs:
        emit(message_line(m))
    # Every tool call the agent made got its result.
    calls = [c["id"] for m in msgs if isinstance(m, AIMessage) for c in m.tool_calls]
    answered = [m.tool_call_id for m in msgs if isinstance(m, ToolMessage)]
    if sorted(calls) != sorted(answered):
        raise RuntimeError(f"tool calls {calls} but tool results for {answered}")
    last = msgs[-1]
    if not isinstance(last, AIMessage) or last.tool_calls:
        raise RuntimeError(f"the graph ended on {last.type}, not a final AI answer")
    if last.content == OUT_OF_STEPS and not last.response_metadata:
        # create_react_agent's own answer when a tool call would pass the limit.
        raise RuntimeError(f"the agent ran out of steps (recursion_limit {a.recursion_limit})")
    answer = str(last.text)
    emit({"answer": answer})
    print(answer, flush=True)




if __name__ == "__main__":
    run(main, "OPENAI_API_KEY")
