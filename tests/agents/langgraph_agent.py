"""Drive an OpenAI-compatible endpoint with LangGraph's prebuilt ReAct agent.

    langgraph_agent.py [--stream] [--responses] [--max-retries N] [--timeout S] TASK

`langgraph.prebuilt.create_react_agent` over langchain-openai's
`ChatOpenAI(model=$AGENT_MODEL or gpt-4o-mini, temperature=0)` at
OPENAI_BASE_URL with OPENAI_API_KEY (both from the environment only, passed
explicitly too; the key is never printed), with two deterministic local
tools, add(a, b) and multiply(a, b), and recursion_limit 12. Like
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
import os
import warnings
from importlib.metadata import version

# No traces leave the machine, whatever the environment says.
os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.errors import GraphRecursionError  # noqa: E402

with warnings.catch_warnings():
    # create_react_agent is deprecated for langchain.agents.create_agent
    # (another package); it is still LangGraph's prebuilt ReAct agent.
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent  # noqa: E402

from agent_common import NAME, emit, env, run
RECURSION_LIMIT = 12
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


def main() -> None:
    p = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n\n")[0])
    p.add_argument("task")
    p.add_argument("--stream", action="store_true", help="ChatOpenAI streams its calls (SSE)")
    p.add_argument("--responses", action="store_true", help="ChatOpenAI uses the Responses API")
    p.add_argument("--max-retries", type=int, default=2, help="the SDK's retries (default 2)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
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
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(model, [add, multiply])
    emit({"client": "langgraph", "version": version("langgraph"),
          "langchain_openai": version("langchain-openai"), "openai": version("openai"),
          "api": "responses" if a.responses else "chat.completions",
          "model": model_name, "stream": a.stream})

    try:
        state = agent.invoke({"messages": [HumanMessage(content=a.task)]},
                             config={"recursion_limit": RECURSION_LIMIT})
    except GraphRecursionError as e:
        raise RuntimeError(f"no answer within recursion_limit {RECURSION_LIMIT}: {e}") from None
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
        raise RuntimeError(f"the agent ran out of steps (recursion_limit {RECURSION_LIMIT})")
    answer = str(last.text)
    emit({"answer": answer})
    print(answer, flush=True)




if __name__ == "__main__":
    run(main, "OPENAI_API_KEY")
